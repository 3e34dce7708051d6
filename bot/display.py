"""Plain-text pieces every front end shows the same way: the answer's footer (in the answer's language),
a paper's title, detail line and slots in the program, the "answer without the LLM" prefix."""

from __future__ import annotations

import re

from paperbot.messages import text
from paperbot.records import Paper, Slot
from paperbot.text import readable
from retrieval.plan import Plan
from retrieval.types import TOO_GENERAL, Answer, SearchResult

_SAFE_URL = re.compile(r"https?://[^\s<>\"'`]+")
MAX_URL_CHARS = 500


# -- a paper's title and detail line, as every front end shows them -------------------------------------


def paper_title(paper: Paper) -> str:
    """The paper's title as it reads (LaTeX rendered), or the derived label of an untitled abstract."""
    return readable(paper.title or paper.label)


def safe_url(url: str) -> str:
    """`url` when it is a plain web address fit to show (and to put in a markdown link), else ""."""
    if _SAFE_URL.fullmatch(url or "") and len(url) <= MAX_URL_CHARS:
        return url.replace("(", "%28").replace(")", "%29")
    return ""


def paper_link(paper: Paper) -> str:
    """The paper's page (OpenReview forum, else the conference site), when it is a usable web address."""
    return next((u for u in map(safe_url, (paper.url, paper.site_url)) if u), "")


def paper_details(paper: Paper) -> list[str]:
    """What the detail line says before the link: file and position, type, track, area."""
    return [paper.where] + [v for v in (paper.presentation, paper.track, paper.area) if v]


def duration(ms: float, lang: str = "en") -> str:
    """A short time as people read it: "40 ms" below a second (never "0.0 s"), "2.3 s" above."""
    if ms < 1000:
        return text("FOOTER_MS", lang, ms=max(1, round(ms)))
    return text("FOOTER_SECONDS", lang, seconds=ms / 1000)


def slot_time(slot: Slot, lang: str = "en") -> str:
    """"Tue 10:00" in the program's own local time (the offset it was given with); "" when unknown."""
    starts = slot.starts
    if starts is None:
        return ""
    weekday = text("WEEKDAYS", lang).split()[starts.weekday()]
    return text("SLOT_TIME", lang, weekday=weekday, time=starts.strftime("%H:%M"))


def poster_number(slot: Slot, lang: str = "en") -> str:
    number = slot.poster_position.lstrip("#").strip()
    return text("POSTER_NUMBER", lang, number=number) if number else ""


def slot_line(slot: Slot, lang: str = "en") -> str:
    """"Oral Session 2B · Tue 10:00 · Hall A", "Poster Session 3 · Wed 11:00 · #1234" (room when no number)."""
    place = poster_number(slot, lang) if slot.kind == "poster" and slot.poster_position else slot.room
    return " · ".join(p for p in (slot.session or slot.kind, slot_time(slot, lang), place) if p)


def plan_summary(plan: Plan, lang: str = "en") -> list[str]:
    """The lines that open a plan: an abstention, "nothing planned" (for the day asked), or its size."""
    lines = [text("ABSTAIN", lang)] if plan.abstained else []
    if not plan.slots:
        day = text("PLAN_EMPTY_DAY", lang, day=plan.day) if plan.day else ""
        return [*lines, text("PLAN_EMPTY", lang, day=day)]
    return [*lines, text("PLAN_COUNT", lang, papers=plan.papers, slots=len(plan.slots))]


def plan_day(slot, lang: str = "en") -> str:  # slot: retrieval.plan.PlanSlot
    """The heading of a plan's day, "Tue 2026-12-08" (the program's local date), or one saying the slot has no
    time yet."""
    starts = slot.slot.starts
    if starts is None:
        return text("PLAN_NO_TIME", lang)
    weekday = text("WEEKDAYS", lang).split()[starts.weekday()]
    return text("PLAN_DAY", lang, weekday=weekday, date=starts.date().isoformat())


def plan_slot_heading(slot, lang: str = "en") -> str:  # slot: retrieval.plan.PlanSlot
    """"10:00–10:15 · Oral Session 2A · Hall A · ⚠ clashes with Oral Session 2B" (local times)."""
    starts, ends = slot.slot.starts, slot.slot.ends
    when = (starts.strftime("%H:%M") + (ends.strftime("–%H:%M") if ends is not None else "")) if starts else ""
    parts = [when, slot.session or slot.kind, slot.room]
    if slot.clashes:
        parts.append("⚠ " + text("PLAN_CLASH", lang, sessions=", ".join(slot.clashes)))
    return " · ".join(p for p in parts if p)


def search_notice(result: SearchResult, lang: str) -> list[str]:
    """What a search's list of papers opens with: a filter's notice, or why none of them answers (the question is
    too general, or no paper is close enough), then that the closest are listed."""
    if result.notice:
        return [result.notice]
    if not result.abstained:
        return []
    return [text("TOO_GENERAL" if result.reason == TOO_GENERAL else "ABSTAIN", lang), text("ABSTAIN_CLOSEST", lang)]


def answer_footer(answer: Answer, *, detail: bool = False) -> str:
    """mode · model · time · tokens · what was searched · notes · why the LLM answer was not used.

    `detail` adds the operator's detail of a failure (`paperbot ask` in a terminal); a public footer
    (Discord) never shows it: it names no endpoint and quotes no server, but it is not for everyone either.
    """
    lang = answer.language
    mode = {"extractive": "MODE_EXTRACTIVE", "llm": "MODE_LLM"}.get(answer.mode)
    parts = [text("FOOTER_MODE", lang, mode=text(mode, lang) if mode else answer.mode)]
    if answer.model:
        parts.append(text("FOOTER_MODEL", lang, model=answer.model))
    if answer.latency_ms is not None:
        parts.append(duration(answer.latency_ms, lang))
    if answer.tokens:
        parts.append(text("FOOTER_TOKENS", lang, tokens=answer.tokens))
    if answer.search_query:
        parts.append(text("FOOTER_SEARCHED", lang, query=answer.search_query))
    parts += answer.notes
    parts += removed_notes(answer)
    if answer.fallback_reason:
        reason = answer.fallback_reason
        if detail and answer.fallback_detail:
            reason += f" ({answer.fallback_detail})"
        parts.append(text("FOOTER_FELL_BACK", lang, reason=reason))
    return " · ".join(parts)


def removed_notes(answer: Answer) -> list[str]:
    """"2 sentences removed: not supported by their passages", one per reason, for an LLM answer shown."""
    if answer.mode != "llm" or not answer.removed:
        return []
    counts: dict[str, int] = {}
    for r in answer.removed:
        counts[r.reason] = counts.get(r.reason, 0) + 1
    lang = answer.language
    return [text("REMOVED_ONE", lang, reason=text(name, lang)) if n == 1
            else text("REMOVED_MANY", lang, count=n, reason=text(name, lang)) for name, n in counts.items()]


# "!nollm question", "/ask --no-llm question", "--no-llm question": answer this one without the language model.
_NO_LLM = re.compile(r"^\s*(?:/ask\s+)?(?:!no-?llm|--no-llm)(?:\s+|$)", re.I)


def without_llm_prefix(question: str) -> tuple[str, bool]:
    """(question without a "!nollm" / "--no-llm" prefix, whether the language model may answer it)."""
    m = _NO_LLM.match(question)
    return (question[m.end():].strip(), False) if m else (question, True)
