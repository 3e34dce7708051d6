"""A personal plan for the conference week: the best-matching papers' talks and posters, in time order.

    plan_for(library, text, k, day)   the papers a topic (or a pasted abstract) finds, as a plan
    build_plan(query, scored, day)    any papers (a user's saved ones) with their scores, as a plan
    plan_events(plan)                 one calendar event per paper slot (paperbot/ics.py writes them)

A plan is a list of `PlanSlot`s: one per session, time and room (the papers of one poster session share a
slot, each with its poster number), sorted by start. Two talks that overlap in time are a clash: each is
marked with the sessions it clashes with (a poster session is browsed, not sat through, so it never clashes).
No Discord here; the front ends render a `Plan`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Protocol

from paperbot.ics import Event
from paperbot.records import Paper, Slot
from paperbot.text import readable
from retrieval.types import SearchResult, Similar, paper_json

TALKS = ("oral", "spotlight")
LONG_TEXT = 300  # characters: a text this long is an abstract, matched as `related` does, not as a query
DEFAULT_LENGTH = timedelta(hours=1)  # a slot without an end, in a calendar


@dataclass(frozen=True)
class PlanPaper:
    paper: Paper
    score: float | None  # None for papers the user chose (saved papers)
    poster_position: str = ""

    def to_json(self) -> dict:
        out = {**paper_json(self.paper), "poster_position": self.poster_position}
        out["score"] = round(self.score, 4) if self.score is not None else None
        return out


@dataclass(frozen=True)
class PlanSlot:
    """One session at one time in one room, and the plan's papers presented there."""

    session: str
    start: str  # ISO 8601 with the program's offset, as in the source
    end: str
    room: str
    kind: str
    papers: tuple[PlanPaper, ...]
    clashes: tuple[str, ...] = ()  # the sessions of the other talks at the same time

    @property
    def slot(self) -> Slot:
        return Slot(session=self.session, start=self.start, end=self.end, room=self.room, kind=self.kind)

    @property
    def day(self) -> str:
        """The local date (YYYY-MM-DD) in the program's own time, "" when the time is unknown."""
        starts = self.slot.starts
        return starts.date().isoformat() if starts is not None else ""

    def to_json(self) -> dict:
        return {"session": self.session, "start": self.start, "end": self.end, "room": self.room,
                "kind": self.kind, "clash": bool(self.clashes), "clashes_with": list(self.clashes),
                "papers": [p.to_json() for p in self.papers]}


@dataclass(frozen=True)
class Plan:
    query: str
    slots: list[PlanSlot]
    unscheduled: list[PlanPaper] = field(default_factory=list)  # matched, but not in the program
    day: str = ""  # the day asked for, or "" for the whole week
    abstained: bool = False  # nothing was close enough to the query

    @property
    def papers(self) -> int:
        return len({p.paper.paper_id for s in self.slots for p in s.papers})

    def days(self) -> list[str]:
        return list(dict.fromkeys(s.day for s in self.slots))

    def to_json(self) -> dict:
        out: dict[str, Any] = {"query": self.query, "slots": [s.to_json() for s in self.slots]}
        if self.day:
            out["day"] = self.day
        if self.unscheduled:
            out["unscheduled"] = [p.to_json() for p in self.unscheduled]
        if self.abstained:
            out["abstained"] = True
        return out


def check_day(day: str) -> str:
    """`day` as YYYY-MM-DD, or ValueError saying what is expected."""
    try:
        return datetime.strptime(day, "%Y-%m-%d").date().isoformat()
    except ValueError:
        raise ValueError(f"day must be a date such as 2026-12-08, got {day!r}") from None


class FindsPapers(Protocol):
    """What a plan needs of the library (retrieval.library.Library)."""

    def search(self, query: str, k: int | None = None) -> SearchResult: ...

    def related(self, text: str, k: int = 10) -> list[Similar]: ...


def plan_for(library: FindsPapers, text: str, k: int = 10, day: str = "") -> Plan:
    """The plan of the papers `text` finds: a topic by search (relevant papers only), an abstract by likeness."""
    text = " ".join(text.split())
    if len(text) > LONG_TEXT:
        scored = [(s.paper, s.score) for s in library.related(text, k)]
        return build_plan(text, scored, day)
    result = library.search(text, k)
    scored = [(h.paper, h.score) for h in result.hits if h.relevant]
    return build_plan(result.query, scored, day, abstained=result.abstained)


def build_plan(query: str, scored: Iterable[tuple[Paper, float | None]], day: str = "", *,
               abstained: bool = False) -> Plan:
    """Group the papers' slots by session, time and room; keep `day` (local date) only, when given."""
    groups: dict[tuple[str, str, str, str, str], list[PlanPaper]] = {}
    unscheduled: list[PlanPaper] = []
    for paper, score in scored:
        slots = [s for s in paper.slots if not day or (s.starts is not None and s.starts.date().isoformat() == day)]
        if not paper.slots:
            unscheduled.append(PlanPaper(paper, score))
        for s in slots:
            groups.setdefault((s.session, s.start, s.end, s.room, s.kind), []).append(
                PlanPaper(paper, score, s.poster_position))
    plan_slots = [PlanSlot(session, start, end, room, kind, tuple(sorted(papers, key=_best_first)))
                  for (session, start, end, room, kind), papers in groups.items()]
    plan_slots.sort(key=lambda s: s.slot.order())
    return Plan(query=query, slots=_mark_clashes(plan_slots), unscheduled=unscheduled, day=day, abstained=abstained)


def _best_first(p: PlanPaper) -> float:
    return -p.score if p.score is not None else 0.0  # sorted() is stable: chosen papers keep their order


def _mark_clashes(slots: Sequence[PlanSlot]) -> list[PlanSlot]:
    spans = [_span(s) for s in slots]
    out = []
    for i, s in enumerate(slots):
        clashes: list[str] = []
        mine = spans[i]
        if s.kind in TALKS and mine is not None:
            a0, a1 = mine
            for j, other in enumerate(slots):
                theirs = spans[j]
                if j != i and other.kind in TALKS and theirs is not None:
                    b0, b1 = theirs
                    if a0 < b1 and b0 < a1 and (other.session, other.room) != (s.session, s.room):
                        clashes.append(other.session or other.room)
        out.append(PlanSlot(s.session, s.start, s.end, s.room, s.kind, s.papers, tuple(dict.fromkeys(clashes))))
    return out


def _span(s: PlanSlot) -> tuple[datetime, datetime] | None:
    """The slot's start and end; None without a start, or for a time no calendar can hold (at the edge of year
    9999, where an hour more or the move to UTC is past the last date)."""
    slot = s.slot
    starts = slot.starts
    if starts is None:
        return None
    try:
        ends = slot.ends or starts + DEFAULT_LENGTH
        starts.astimezone(timezone.utc), ends.astimezone(timezone.utc)
    except OverflowError:
        return None
    return starts, max(ends, starts)


def slots_out_of_range(plan: Plan) -> list[PlanSlot]:
    """The plan's slots with a start that no calendar can hold: plan_events leaves them out."""
    return [s for s in plan.slots if s.slot.starts is not None and _span(s) is None]


# -- calendar events --------------------------------------------------------------------------


def slot_uid(paper_id: str, slot: Slot) -> str:
    """Stable per paper and slot: re-importing a calendar updates its events instead of duplicating them."""
    digest = hashlib.sha256("\x1f".join([paper_id, slot.session, slot.kind, slot.room]).encode()).hexdigest()[:16]
    return f"{paper_id}-{digest}@paperbot"


def paper_events(papers: Iterable[Paper], day: str = "") -> list[Event]:
    """One event per scheduled slot of each paper (a saved list's calendar)."""
    return plan_events(build_plan("", [(p, None) for p in papers], day))


def plan_events(plan: Plan) -> list[Event]:
    """One event per paper slot of the plan, in time order; slots without a time (or out of range) are left out."""
    events = []
    for s in plan.slots:
        span = _span(s)
        if span is None:
            continue
        for p in s.papers:
            place = ", ".join(x for x in (s.room, f"poster #{p.poster_position.lstrip('#')}"
                                          if p.poster_position else "") if x)
            url = p.paper.url or p.paper.site_url
            description = "\n".join(x for x in (f"{s.session} ({s.kind})" if s.kind else s.session,
                                                 ", ".join(p.paper.authors), url) if x)
            events.append(Event(uid=slot_uid(p.paper.paper_id, Slot(session=s.session, room=s.room, kind=s.kind)),
                                start=span[0], end=span[1], summary=readable(p.paper.title or p.paper.label),
                                location=place, url=url, description=description))
    return events
