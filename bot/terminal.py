"""Terminal rendering: what `paperbot ask`, `search` and `chat` print.

`ask` and `search` render results directly; `chat` renders the Discord messages
the bot would post (recorded payloads), so the terminal shows what a lab member
would see, minus the styling. Both share the wrapping and the answer footer.
"""

from __future__ import annotations

import re
import textwrap

from bot.display import (
    answer_footer,
    paper_details,
    paper_link,
    paper_title,
    plan_day,
    plan_slot_heading,
    plan_summary,
    search_notice,
    slot_line,
)
from paperbot import messages
from paperbot.language import message_language
from paperbot.records import Paper
from paperbot.text import readable, strip_control
from retrieval.plan import Plan
from retrieval.types import Answer, Hit, SearchResult, Similar

WIDTH = 100
_UNESCAPE = re.compile(r"\\([\\*_`~|>\[\]#-])")


def wrap(text: str, indent: str = "", width: int = WIDTH) -> list[str]:
    """`text` wrapped line by line (blank lines kept)."""
    out: list[str] = []
    for line in text.split("\n"):
        out += textwrap.wrap(line, width=width, initial_indent=indent, subsequent_indent=indent) or [""]
    return out


def _quoted(text: str, lang: str = "en") -> list[str]:
    if not text:
        return wrap(f"({messages.text('ABSTRACT_PENDING', lang)})", indent="    ")
    return wrap(f"\u201c{readable(text)}\u201d", indent="    ")


def title_of(paper: Paper) -> str:
    return strip_control(paper_title(paper))


def detail_line(paper: Paper, lang: str = "en") -> str:
    """file and position · type · track · area · the paper's page; then its talks and posters, one a line."""
    parts = [*paper_details(paper), paper_link(paper)]
    first = "    " + strip_control(" · ".join(p for p in parts if p))
    return "\n".join([first, *(f"    {slot_line(s, lang)}" for s in paper.slots)])


def _hit_lines(n: int, h: Hit, lang: str = "en") -> list[str]:
    return [f"[{n}] {title_of(h.paper)}  (score {h.score:.2f})", detail_line(h.paper, lang), *_quoted(h.snippet, lang)]


def _filter_lines(filters) -> list[str]:
    return [f"Filters: {filters.describe()}"] if filters else []


def render_search_text(result: SearchResult) -> str:
    lang = message_language(result.query)
    lines = [f"Query: {result.query}", *_filter_lines(result.filters)]
    lines += search_notice(result, lang)
    for n, h in enumerate(result.hits, start=1):
        lines += _hit_lines(n, h, lang)
    return "\n".join(lines)


def render_answer_text(answer: Answer) -> str:
    """The answer, its sources and its footer; fixed text in the answer's language."""
    lang = answer.language
    lines = [f"Q: {answer.question}", *_filter_lines(answer.filters), ""]
    if answer.notice:
        lines.append(answer.notice)
        return "\n".join(lines)
    if answer.abstained:
        lines.append(messages.text("ABSTAIN", lang))
        if answer.hits:
            lines += ["", messages.text("ABSTAIN_CLOSEST", lang)]
            for n, h in enumerate(answer.hits, start=1):
                lines += _hit_lines(n, h, lang)
    else:
        lines += wrap(readable(answer.text))
        lines += ["", messages.text("SOURCES", lang)]
        for c in answer.citations:
            lines += [f"[{c.n}] {title_of(c.paper)}", detail_line(c.paper, lang)]
            lines += _quoted(c.quote, lang)
    lines += ["", answer_footer(answer, detail=True)]
    return "\n".join(lines)


def render_papers_text(heading: str, papers: list[Paper]) -> str:
    """A list of papers (an author's, an area's): title, authors, details."""
    lines = [heading, ""]
    for n, p in enumerate(papers, start=1):
        lines.append(f"{n}. {title_of(p)}")
        if p.authors:
            lines += wrap(p.authors_line, indent="    ")
        lines.append(detail_line(p))
    return "\n".join(lines)


def render_similar_text(heading: str, similar: list[Similar]) -> str:
    lines = [heading, ""]
    for n, s in enumerate(similar, start=1):
        lines += [f"[{n}] {title_of(s.paper)}  (score {s.score:.2f})", detail_line(s.paper),
                  f"    shared terms: {', '.join(s.shared_terms) or '—'}"]
    return "\n".join(lines)


def render_plan_text(plan: Plan, lang: str = "en") -> str:
    """The plan day by day: each slot's time, session and place (clashes marked), then its papers."""
    lines = [messages.text("PLAN_HEADING", lang, query=plan.query), *plan_summary(plan, lang)]
    day = None
    for s in plan.slots:
        if s.day != day:
            day = s.day
            lines += ["", plan_day(s, lang)]
        lines.append("  " + plan_slot_heading(s, lang))
        for p in s.papers:
            number = f"#{p.poster_position.lstrip('#')} " if p.poster_position else ""
            score = f"  (score {p.score:.2f})" if p.score is not None else ""
            lines.append(f"      {number}{title_of(p.paper)}{score}")
    if plan.unscheduled:
        titles = "; ".join(title_of(p.paper) for p in plan.unscheduled)
        lines += ["", *wrap(messages.text("PLAN_UNSCHEDULED", lang, titles=titles))]
    return "\n".join(lines)


# -- Discord messages, as `paperbot chat` shows them ------------------------------------------


def unescape(text: str) -> str:
    """Markdown-escaped text as a person reads it."""
    return _UNESCAPE.sub(r"\1", text).replace("\u200b", "")


def message_buttons(message: dict) -> list[str]:
    """The labels of a message payload's buttons, in order."""
    return [c.get("label", "") for row in message.get("components") or [] for c in row.get("components") or []
            if c.get("type") == 2]


def render_message(message: dict, width: int = WIDTH) -> str:
    """A message payload as plain text: what a person sees in Discord, minus the styling."""
    lines: list[str] = []
    if message.get("content"):
        lines += wrap(unescape(message["content"]), width=width)
    for embed in message.get("embeds") or []:
        if embed.get("title"):
            lines += wrap(unescape(embed["title"]), width=width)
            lines.append("")
        if embed.get("description"):
            lines += wrap(unescape(embed["description"]), width=width)
        for f in embed.get("fields") or []:
            lines.append("")
            lines += wrap(unescape(f["name"]), width=width)
            lines += wrap(unescape(f["value"]), indent="    ", width=width)
        if embed.get("footer"):
            lines += ["", unescape(embed["footer"]["text"])]
    for a in message.get("attachments") or []:
        lines += ["", f"[file: {a.get('filename')}, {a.get('size', 0)} bytes]"]
    labels = message_buttons(message)
    if labels:
        lines += ["", "  ".join(f"[{b}]" for b in labels)]
    return "\n".join(lines)
