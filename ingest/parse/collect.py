"""Records → papers, one per id (repeated entries merged), and the abstracts a file supplies for papers
listed elsewhere; what was skipped, kept title-only, not accepted or in conflict, counted and named."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

from ingest import fields as F
from ingest.labels import derive_label, find_links
from ingest.parse.decode import Records
from ingest.parse.draft import Draft, check_abstract, check_record, draft_of, safe_id, text_id, title_only, to_paper
from ingest.parse.merge import clean, merge, not_accepted, unwrap_note
from ingest.parse.place import Place
from ingest.parse.tabular import BadRow
from paperbot.errors import InputError
from paperbot.records import Paper

REASONS_SHOWN = 3  # failing records named when a file is refused
# A record with only these keys (and an abstract) supplies the abstract of a paper listed elsewhere.
_SUPPLEMENT_KEYS = set(F.names("id")) | set(F.names("abstract"))


@dataclass(frozen=True)
class Supplement:
    """The abstract of a paper listed in another file (a program without abstracts)."""

    paper_id: str
    abstract: str
    source: str
    position: int
    where: str  # file and record, for messages


@dataclass
class ParsedFile:
    papers: list[Paper] = field(default_factory=list)
    abstracts: list[Supplement] = field(default_factory=list)
    not_accepted: list[str] = field(default_factory=list)  # where each withdrawn or rejected submission was
    decisions: Counter[str] = field(default_factory=Counter)  # the not-accepted decisions, as written
    records: int = 0
    skipped: list[str] = field(default_factory=list)  # "file record 3: reason" for each record left out
    title_only: list[str] = field(default_factory=list)  # the same for records kept with their title only
    conflicts: list[str] = field(default_factory=list)  # repeated ids whose abstracts differ (the first kept)
    ignored: Counter[str] = field(default_factory=Counter)  # fields no table entry reads, with their counts
    cleaned: int = 0  # records whose text had control characters removed


def supplement_paper(s: Supplement) -> Paper:
    """An abstract whose paper is listed nowhere else: an untitled paper of its own."""
    return Paper(paper_id=s.paper_id, source=s.source, position=s.position, abstract=s.abstract,
                 label=derive_label(s.abstract), links=find_links(s.abstract))


def with_abstract(paper: Paper, abstract: str) -> Paper:
    """`paper` with the abstract published apart from it."""
    return replace(paper, abstract=abstract, links=tuple(dict.fromkeys(paper.links + find_links(abstract))),
                   label=paper.title or derive_label(abstract))


def collect(found: tuple[Records, bool], source: str, where: str, strict: bool = False,
            by_line: bool = False) -> ParsedFile:
    """Records → papers, one per id (repeated entries merged), and abstract supplements.

    A failing record is skipped (kept title-only when it has a title) and named; `strict` raises at the
    first one. When most records fail the file is refused, naming the first few.
    """
    records, mapping = found
    if not records:
        raise InputError(where, "contains no papers")
    out = ParsedFile(records=len(records))
    merged: dict[str, tuple[Place, int, Draft]] = {}  # each paper's first record, its number, what it gave
    order: list[str | Supplement] = []  # papers (by key) and abstracts, in the order of their first record
    failures: list[InputError] = []
    for line, n, rec in records:
        place = Place(where, line, None if by_line else n)
        try:
            if isinstance(rec, BadRow):
                raise place.fail(str(rec))
            if not isinstance(rec, dict):
                raise place.fail(f"expected a JSON object, got {type(rec).__name__}")
            rec, cleaned = clean(rec)
            out.cleaned += cleaned
            raw_note = unwrap_note(rec)
            out.ignored.update(F.ignored(raw_note))
            note = F.normalize(raw_note)
            decision = not_accepted(note)
            if decision:
                out.not_accepted.append(f"{where}:{line}" if line is not None else f"{where} record {n}")
                out.decisions[decision] += 1
                continue
            draft = None
            try:
                draft = draft_of(note, place)
                if mapping or (draft.id and set(note) <= _SUPPLEMENT_KEYS and draft.abstract):
                    if not draft.abstract:
                        raise place.fail(f"the abstract of {draft.id[:40]!r} is empty")
                    check_abstract(draft.abstract, place)
                    order.append(Supplement(safe_id(draft.id), draft.abstract, source, n, place.ref()))
                    continue
                check_record(draft, place)
            except InputError as exc:
                title = note.get("title") or note.get("name")
                if strict or not isinstance(title, str) or not title.strip() or mapping:
                    raise
                failures.append(exc)
                out.title_only.append(f"{exc} (kept with its title only)")
                if draft is not None and draft.title:  # only the abstract failed: keep everything else
                    draft = replace(draft, abstract="")
                else:
                    draft = title_only(note)
        except InputError as exc:
            if strict:
                raise
            failures.append(exc)
            out.skipped.append(str(exc))
            continue
        key = draft.id or f"\x00{n}"
        if key in merged:
            first_place, first_n, first = merged[key]
            if first.abstract and draft.abstract and text_id(first.abstract) != text_id(draft.abstract):
                problem = (f"{place.ref()} repeats the id {draft.id!r} of {first_place.ref()} with a different "
                           "abstract; the first is kept")
                if strict:
                    raise InputError(where, problem.removeprefix(where).lstrip(": ") or problem, line=line)
                out.conflicts.append(problem)
            merged[key] = (first_place, first_n, merge(first, draft))
        else:
            merged[key] = (place, n, draft)
            order.append(key)
    if failures and len(records) == 1:
        raise failures[0]
    if failures and len(failures) * 2 > len(records):
        shown = "; ".join((f"line {e.line}: " if e.line is not None else "") + e.problem
                          for e in failures[:REASONS_SHOWN])
        more = len(failures) - REASONS_SHOWN
        raise InputError(where, f"{len(failures)} of {len(records)} records failed, so the file is refused: "
                         f"{shown}" + (f"; and {more} more" if more > 0 else ""))
    # A paper's position is its place in the file, the number of its first record, so that records
    # skipped, not accepted or repeating an earlier one do not shift the papers after them.
    for entry in order:
        if isinstance(entry, Supplement):
            out.abstracts.append(entry)
        else:
            first_place, first_n, draft = merged[entry]
            out.papers.append(to_paper(draft, source, first_n, first_place))
    return out
