"""The model's reply made safe and checked, sentence by sentence, as it streams in.

A reply is untrusted. Whatever reaches a user (a preview while the model writes,
the final answer) passes the same steps, in order:

* `<think>` reasoning and chat-template debris are removed (grounding.strip_template);
* links and images become plain text, bare URLs and control characters go
  (`sanitize`); citation numbers that were not in the prompt are removed;
* the configured API key, and anything shaped like a credential, becomes ***
  (paperbot/logs.redact), whatever the passages made the model print;
* each complete sentence is judged once (grounding.Checker): echoed prompt lines,
  repeats and unsupported claims are removed, miscited ones re-cited, hedges
  marked. A decision is final: the shown text only ever grows, so a preview
  never shows what the final answer withdraws. Hedges and sentences the model
  left uncited wait until a cited, checked claim has been shown (a reply with no
  such claim shows nothing and falls back to the extractive answer).

`ReplyCheck` holds that state for one reply; `judge_reply` runs it on a whole
reply at once (what benchmarks/llm_grounding.py measures, and what users get).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from paperbot.logs import redact_text as redact
from paperbot.text import sentences, split_sentences
from paperbot.text import strip_control
from retrieval.grounding import (
    CITE,
    HEDGE_MARK,
    PLACEHOLDER,
    Checker,
    Decision,
    Grounding,
    Passage,
    TokenEncoder,
    echoes_prompt,
    join_sentences,
    normalized,
    strip_template,
)
from retrieval.types import Removed

log = logging.getLogger(__name__)

MAX_ANSWER_CHARS = 4000  # the default bound on an LLM answer; front ends may ask for less
LOOP_REPEATS = 4  # copies of one sentence that make a reply a loop (recorded loops: 8 to 20): reading stops there
LINK_REMOVED = "(link removed)"

# A grounding problem (nothing left) → the public reason for falling back.
_FALLBACK_REASONS = {"echo": "LLM_DEBRIS", "placeholder": "LLM_DEBRIS", "repeated": "LLM_DEBRIS", "empty": "LLM_DEBRIS",
                     "filler": "LLM_DEBRIS", "uncited": "LLM_NO_CITATION", "unsupported": "LLM_UNGROUNDED",
                     "fact": "LLM_UNGROUNDED", "uncheckable": "LLM_UNGROUNDED"}


# -- sanitizing ------------------------------------------------------------------------------

_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.S | re.I)
_WIDE_CITE = re.compile(r"[【［]\s*(\d{1,3})\s*[】］]")
_CITE_GROUP = re.compile(r"\s?\[\s*(\d{1,3}(?:\s*(?:[,;]|[-–])\s*\d{1,3})*)\s*\]")
_IMAGE = re.compile(r"!\[([^\]\n]*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+\"[^\"]*\")?\)")
_LINK = re.compile(r"\[([^\]\n]*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+\"[^\"]*\")?\)")
_REF_DEF = re.compile(r"^\s*\[[^\]\n]+\]:\s*\S+.*$", re.M)
_AUTOLINK = re.compile(r"<(?:https?|ftp|mailto|discord):[^>\s]*>", re.I)
_URL = re.compile(r"\b(?:(?:https?|ftp|discord)://|www\.)[^\s<>()\[\]]+", re.I)
_INVITE = re.compile(r"\b(?:discord\.gg|discord(?:app)?\.com/invite)/\S+", re.I)
_SPACES = re.compile(r"[ \t]+")
_BLANK_LINES = re.compile(r"\n{3,}")


def sanitize(text: str) -> str:
    """Model text made plain: no links or images, no control characters."""
    text = strip_control(text)
    text = _IMAGE.sub(lambda m: m.group(1), text)
    text = _LINK.sub(lambda m: f"[{m.group(1)}]" if m.group(1).strip().isdigit() else m.group(1), text)
    text = _REF_DEF.sub("", text)
    text = _AUTOLINK.sub(LINK_REMOVED, text)
    text = _INVITE.sub(LINK_REMOVED, text)
    return _URL.sub(LINK_REMOVED, text)


def _cited_numbers(inner: str) -> list[int]:
    numbers: list[int] = []
    for part in re.split(r"\s*[,;]\s*", inner):
        bounds = re.split(r"\s*[-–]\s*", part)
        if len(bounds) == 2 and bounds[0].isdigit() and bounds[1].isdigit() and int(bounds[1]) - int(bounds[0]) < 10:
            numbers.extend(range(int(bounds[0]), int(bounds[1]) + 1))
        elif part.isdigit():
            numbers.append(int(part))
    return numbers


def _filter_citations(text: str, valid: set[int], dropped: list[int]) -> str:
    def keep(m: re.Match) -> str:
        numbers = _cited_numbers(m.group(1))
        good = [n for n in dict.fromkeys(numbers) if n in valid]
        dropped.extend(n for n in numbers if n not in valid and n not in dropped)
        lead = m.group(0)[0] if m.group(0)[0].isspace() else ""
        return (lead + "".join(f"[{n}]" for n in good)) if good else ""

    return _CITE_GROUP.sub(keep, text)


def _bound(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    sentence = max(cut.rfind(". "), cut.rfind("。"), cut.rfind("\n"))
    if sentence > limit // 2:
        cut = cut[: sentence + 1]
    else:
        cut = cut[: cut.rfind(" ")] if " " in cut[limit // 2:] else cut
    cut = re.sub(r"\[[^\]]*$", "", cut).rstrip()
    return cut + "…"


_ENDED = re.compile(r"[.!?。！？][\"')\]”’]*(?:\s*\[\d{1,3}\])*$")


def _complete_sentences(text: str) -> str:
    """`text` up to its last complete sentence (with the citations that follow it), if it has one."""
    spans = split_sentences(text.rstrip(), lines=True)  # a line ended by a line break is complete too
    complete = [s for s in spans if _ENDED.search(text[s.start:s.end]) or text[s.end:].lstrip(" \t")[:1] == "\n"]
    if not complete or complete[-1] is spans[-1]:
        return text
    return text[: complete[-1].end]


def strip_thinking(text: str) -> str:
    return _THINK.sub("", text)


def _tidy(text: str) -> str:
    text = "\n".join(_SPACES.sub(" ", line).strip() for line in text.split("\n"))
    text = re.sub(r" +([.,;:!?。，])", r"\1", text)
    return _BLANK_LINES.sub("\n\n", text).strip()


def clean_reply(raw: str, valid: set[int], dropped: list[int] | None = None, secrets: Iterable[str] = ()) -> str:
    """The reply without thinking, template debris, links, control characters, invalid citations or secrets."""
    text = strip_template(strip_thinking(raw))
    text = sanitize(_WIDE_CITE.sub(r"[\1]", text))
    text = _filter_citations(text, valid, [] if dropped is None else dropped)
    return redact(_tidy(text), list(secrets))


def validate_answer(raw: str, valid: set[int], max_chars: int = MAX_ANSWER_CHARS) -> tuple[str, list[int], list[int]]:
    """(clean text, citation numbers it keeps in order, numbers removed as not in the prompt).

    The text is sanitized and bounded; `used` is empty when no valid citation survives,
    or when nothing but citations is left.
    """
    dropped: list[int] = []
    text = _bound(clean_reply(raw, valid, dropped), max_chars)
    used = [int(n) for n in dict.fromkeys(re.findall(r"\[(\d+)\]", text)) if int(n) in valid]
    prose = re.sub(r"\[\d+\]", "", text)
    if sum(ch.isalnum() for ch in prose) < 3:
        used = []
    return text, used, dropped


def _no_citation_reason(dropped: list[int], valid: set[int]) -> str:
    allowed = ", ".join(f"[{n}]" for n in sorted(valid))
    if dropped:
        bad = ", ".join(f"[{n}]" for n in dropped)
        return f"the LLM cited {bad}, which the prompt did not contain (only {allowed}), and no valid passage"
    return f"the LLM's answer cited none of the retrieved passages ({allowed})"


# -- the check, sentence by sentence -----------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """What to show of a reply: `text` citing `used`, or nothing, with `reason` (a messages name) and `detail`;
    or, when the model only said that the passages do not answer, that (`declined`, marked as a hedge)."""

    text: str
    used: list[int]
    dropped: list[int]
    reason: str | None = None
    detail: str = ""
    grounding: Grounding | None = None
    removed: tuple[Removed, ...] = ()
    declined: str = ""


@dataclass
class ReplyCheck:
    """One reply's check as it streams in: `feed` the growing raw text, get the checked text to show."""

    passages: Sequence[Passage]
    encoder: TokenEncoder | None = None
    question: str = ""
    valid: set[int] | None = None
    max_chars: int = MAX_ANSWER_CHARS
    secrets: Sequence[str] = ()
    threshold: float | None = None
    shown: list[str] = field(default_factory=list)
    removed: list[Removed] = field(default_factory=list)
    dropped: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.valid = self._valid = {p.n for p in self.passages} if self.valid is None else set(self.valid)
        self.checker = Checker(self.passages, self.encoder, question=self.question, threshold=self.threshold)
        self._decided = 0  # sentences decided, counted in the order they appear
        self._seen: dict[str, int] = {}
        self._waiting: list[str] = []  # hedges and uncited sentences, until a cited claim is shown
        self._anchored = False
        self._full = False
        self._cited_any = False
        self._grounding = Grounding(text="")

    @property
    def text(self) -> str:
        """The checked text so far: what a preview shows, and the start of the final answer."""
        return join_sentences(self.shown)

    def feed(self, raw: str, final: bool = False) -> str:
        """The reply so far (raw, as streamed) → the checked text to show; complete sentences only, unless `final`."""
        dropped: list[int] = []
        text = clean_reply(raw, self._valid, dropped, self.secrets)
        self.dropped.extend(n for n in dropped if n not in self.dropped)
        return self.feed_clean(text, final)

    def feed_clean(self, text: str, final: bool = False) -> str:
        """`feed` for text already cleaned (sanitized, valid citations only, redacted)."""
        self._cited_any |= bool(CITE.search(text))
        pieces: list[tuple[str, bool]] = []  # (sentence, on an echoed line)
        for line in text.split("\n"):
            echoed = bool(line.strip()) and echoes_prompt(line, self.passages)
            pieces += [(s, echoed) for s in sentences(line, lines=True)]
        complete = len(pieces) if final else len(pieces) - 1
        if not final and pieces and not re.search(r"[^\[\]\d\s]", pieces[-1][0]):
            complete -= 1  # only citations after the last full stop so far: they may belong to it
        while self._decided < complete and not self._full:
            sentence, echoed = pieces[self._decided]
            self._decided += 1
            self._decide(sentence, echoed)
        return self.text

    def _decide(self, sentence: str, echoed: bool) -> None:
        g = self._grounding
        if echoed:
            self._remove(Decision(sentence, reason="echo", why="repeats the prompt"))
            return
        placeholders = len(PLACEHOLDER.findall(sentence))
        if placeholders:
            g.count("placeholder", placeholders)
            sentence = PLACEHOLDER.sub("", sentence).strip()
        key = normalized(sentence)
        if not key:
            return
        if key in self._seen:
            self._seen[key] += 1
            self._remove(Decision(sentence, reason="repeated", why="said already"))
            if self._seen[key] >= LOOP_REPEATS:  # a weak model's loop: nothing after it is read
                self._full = True
            return
        self._seen[key] = 1
        cited = bool(CITE.search(sentence))
        d = self.checker.judge(sentence)
        g.decisions.append(d)
        if not d.shown:
            self._remove(d)
            return
        g.recited += d.recited
        if d.checked and cited:
            self._show(*self._waiting, d.shown)
            self._waiting = []
            self._anchored = True
        elif self._anchored:
            self._show(d.shown)
        else:
            self._waiting.append(d.shown)

    def _show(self, *sentences: str) -> None:
        for s in sentences:
            if len(join_sentences([*self.shown, s])) > self.max_chars:
                if not self.shown:
                    self.shown.append(_bound(s, self.max_chars))
                self._full = True
                return
            self.shown.append(s)

    def _remove(self, d: Decision) -> None:
        self._grounding.count(d.reason or "unsupported")
        self.removed.append(Removed(redact(d.sentence, list(self.secrets)), d.reason or "unsupported", d.why))

    def grounding(self) -> Grounding:
        """The reply's grounding so far (text shown, removal counts, decisions)."""
        g = self._grounding
        g.text = self.text
        g.used = [int(n) for n in dict.fromkeys(CITE.findall(g.text))]
        if not self._anchored and self._waiting:
            g.count("uncited" if not self._cited_any else "unsupported", len(self._waiting))
        return g

    def finish(self, raw: str, finish_reason: str | None = None) -> Verdict:
        """The verdict on the whole reply: what was shown while streaming, plus its last sentences."""
        if finish_reason == "length":  # cut off by LLM_MAX_TOKENS: keep the complete sentences
            raw = _complete_sentences(strip_template(strip_thinking(raw)))
        self.feed(raw, final=True)
        return self.verdict()

    def verdict(self) -> Verdict:
        g = self.grounding()
        removed = tuple(self.removed)
        if g.removed or g.recited:
            log.info("check of the LLM's answer: removed %s, re-cited %d", g.removed, g.recited)
        if not g.text:
            hedges = [s for s in self._waiting if s.startswith(HEDGE_MARK)]
            if hedges and len(hedges) == len(self._waiting):  # only "the passages do not say …": the model declines
                return Verdict("", [], self.dropped, grounding=g, removed=removed, declined=join_sentences(hedges))
            if not self._cited_any:
                return Verdict("", [], self.dropped, "LLM_NO_CITATION", _no_citation_reason(self.dropped, self._valid),
                               g, removed)
            reason = _FALLBACK_REASONS.get(g.problem or "empty", "LLM_UNGROUNDED")
            return Verdict("", [], self.dropped, reason, _grounding_detail(g), g, removed)
        return Verdict(g.text, [n for n in g.used if n in self._valid], self.dropped, grounding=g, removed=removed)


def _grounding_detail(grounding: Grounding) -> str:
    parts = [f"{n} {why}" for why, n in sorted(grounding.removed.items(), key=lambda kv: -kv[1])]
    return "removed: " + ", ".join(parts) if parts else "nothing left to show"


def ground_reply(text: str, passages: Sequence[Passage], encoder: TokenEncoder | None = None, *, question: str = "",
                 threshold: float | None = None) -> Grounding:
    """Keep the sentences of `text` (sanitized, citations valid) that pass `Checker.judge`; all at once.

    The streaming path (`ReplyCheck.feed`) judges the same sentences one by one as they arrive.
    """
    check = ReplyCheck(passages, encoder, question=question, threshold=threshold, valid={p.n for p in passages})
    check.feed_clean(text, final=True)
    return check.grounding()


def judge_reply(raw: str, passages: list[Passage], encoder: TokenEncoder | None, *, question: str = "",
                finish_reason: str | None = None, max_chars: int = MAX_ANSWER_CHARS,
                secrets: Sequence[str] = ()) -> Verdict:
    """The model's whole reply made safe and checked: what `answer_question` shows for it.

    Pure (the embedder aside), so benchmarks/llm_grounding.py measures exactly what users get.
    """
    check = ReplyCheck(passages, encoder, question=question, max_chars=max_chars, secrets=secrets)
    return check.finish(raw, finish_reason)
