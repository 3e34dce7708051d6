"""Autocomplete choices within Discord's limits: papers by title, label or id, and filter values."""

from __future__ import annotations

from collections.abc import Sequence

from bot.app.markdown import CHOICE_NAME, CHOICE_VALUE, CHOICES, clip
from paperbot.records import Paper
from paperbot.text import readable, strip_control
from retrieval.filters import fold


class PaperChoices:
    """Paper autocomplete over one paper list: each paper's label, id and title folded once.

    Folding (and making titles readable) is most of the cost: done per keystroke over 20,000
    papers it took longer than a keystroke may.
    """

    def __init__(self, papers: Sequence[Paper]) -> None:
        self.papers = papers
        self._keys = [(fold(p.label), p.paper_id.lower(), fold(readable(p.title))) for p in papers]

    def __call__(self, typed: str) -> list[tuple[str, str]]:
        """(name, value) pairs: title/label/id matches, best first, at most 25."""
        needle = fold(typed)
        scored: list[tuple[int, int]] = []
        for i, (label, pid, title) in enumerate(self._keys):
            if not needle:
                rank = 3
            elif needle in (label, pid, title):
                rank = 0
            elif label.startswith(needle) or pid.startswith(needle) or title.startswith(needle):
                rank = 1
            elif needle in label or needle in pid or needle in title:
                rank = 2
            else:
                continue
            scored.append((rank, i))
            if not needle and len(scored) == CHOICES:
                break
        scored.sort()
        out = []
        for _, i in scored[:CHOICES]:
            p = self.papers[i]
            after = p.authors[0] + (" et al." if len(p.authors) > 1 else "") if p.authors else p.where
            name = clip(strip_control(f"{readable(p.title or p.label)} — {after}"), CHOICE_NAME)
            out.append((name, p.paper_id[:CHOICE_VALUE]))
        return out


def paper_choices(papers: Sequence[Paper], typed: str) -> list[tuple[str, str]]:
    """(name, value) pairs for paper autocomplete: title/label/id matches, best first, at most 25
    (once; the bot keeps a `PaperChoices` per paper list)."""
    return PaperChoices(papers)(typed)


def value_choices(values: Sequence[str]) -> list[tuple[str, str]]:
    """(name, value) pairs for filter autocomplete (authors, areas, keywords…), within Discord's limits."""
    return [(clip(strip_control(v), CHOICE_NAME) or "\u2014", v) for v in values if len(v) <= CHOICE_VALUE][:CHOICES]
