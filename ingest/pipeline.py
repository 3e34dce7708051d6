"""parse → chunk → embed → store, incrementally.

Chunk ids carry the paper's embed hash (title and abstract), so a changed paper's new chunks are
written before its old ones are deleted, and an interrupted run is finished by
simply running again: a paper counts as stored only when all of its chunks for
its current content are present. Every file is parsed before anything is
written, so a malformed file leaves the store untouched. A paper whose embedded
text is unchanged but whose metadata changed (a decision, an area, a new author
list) has its stored metadata updated in place, without embedding anything.
"""

from __future__ import annotations

import logging
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ingest.chunk import Chunk, chunk_text
from ingest.parse import (
    ParsedFile,
    UnreadableFile,
    discover_all,
    read_file,
    supplement_paper,
    text_id,
    with_abstract,
)
from ingest.sentence_rows import LegacySentences
from ingest.store import Store, Writes
from paperbot.errors import InputError
from paperbot.protocols import TextEmbedder, WordPieces
from paperbot.records import (
    Paper,
    StoredChunk,
    assemble,
    chunk_id,
    chunk_metadata,
    chunk_prefix,
    indexed_text,
    is_complete,
)
from paperbot.text import Span, split_sentences

log = logging.getLogger(__name__)

# Fraction of the model window a chunk may fill; the rest is room for the title.
CHUNK_FILL = 0.8
# Papers embedded between two writes. The first batch is small, so progress and a write error show early; a
# lone `paperbot ingest` then embeds larger batches: the model's batches are ordered by length over more texts,
# and 500 papers ingested 0.96x the model's time in one batch against 0.91x in batches of 64 (docs/benchmarks.md,
# "The ingest pipeline against the model alone"). A serving process (ingest.store.Writes.SHARED) keeps small
# batches beside its event loop.
EMBED_BATCH_PAPERS = 64
LONE_EMBED_BATCH_PAPERS = 512

Progress = Callable[[int, int], None]


IGNORED_SHOWN = 8  # ignored field names listed per file; the rest are counted
FILES_SHOWN = 5  # file names listed in a folder's summary line; the rest are counted


@dataclass
class FileReport:
    """What one corpus file gave, and what it held that was not used (for the ingest summary)."""

    name: str
    records: int = 0
    papers: int = 0
    skipped: list[str] = field(default_factory=list)  # failing records left out, with their reasons
    title_only: list[str] = field(default_factory=list)  # failing records kept with their title only
    decisions: Counter[str] = field(default_factory=Counter)  # not-accepted decisions skipped, as written
    conflicts: list[str] = field(default_factory=list)  # repeated ids with a different abstract
    ignored: Counter[str] = field(default_factory=Counter)  # fields no reader uses, with their counts
    cleaned: int = 0  # records whose control characters were removed
    path: str = ""

    @classmethod
    def of(cls, path: Path, parsed: ParsedFile) -> FileReport:
        return cls(name=path.name, path=str(path), records=parsed.records, papers=len(parsed.papers) + len(parsed.abstracts),
                   skipped=parsed.skipped, title_only=parsed.title_only, decisions=parsed.decisions,
                   conflicts=parsed.conflicts, ignored=parsed.ignored, cleaned=parsed.cleaned)

    def notes(self) -> list[str]:
        """One line per kind of thing worth knowing about this file (empty when it was read whole)."""
        out = []
        if self.skipped or self.title_only:
            counts = ", ".join(part for part in (f"{len(self.skipped)} records skipped" if self.skipped else "",
                                                 f"{len(self.title_only)} kept with their title only"
                                                 if self.title_only else "") if part)
            first = (self.skipped + self.title_only)[0]
            out.append(f"{self.name}: {counts} (first: {first.removeprefix(self.path).lstrip(': ')})")
        if self.decisions:
            out.append(f"{self.name}: {sum(self.decisions.values())} not accepted, skipped: "
                       + ", ".join(f"{d} ×{n}" for d, n in self.decisions.most_common(IGNORED_SHOWN)))
        if self.conflicts:
            out.append(f"{self.name}: {len(self.conflicts)} repeated ids with a different abstract (the first is "
                       f"kept): {self.conflicts[0]}")
        if self.cleaned:
            out.append(f"{self.name}: control characters removed from {self.cleaned} records")
        if self.ignored:
            shown = ", ".join(f"{k} ×{n}" for k, n in self.ignored.most_common(IGNORED_SHOWN))
            rest = len(self.ignored) - IGNORED_SHOWN
            out.append(f"{self.name}: ignored: {shown}" + (f" and {rest} more fields" if rest > 0 else ""))
        return out


@dataclass
class IngestSummary:
    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    moved: int = 0
    chunks_embedded: int = 0
    snippets_added: int = 0  # papers stored by an earlier version whose sentence vectors were computed now
    embed_seconds: float = 0.0  # time spent chunking and embedding new papers
    write_seconds: float = 0.0  # time spent writing their chunks and sentence vectors
    duplicates: list[str] = field(default_factory=list)
    clashes: list[str] = field(default_factory=list)  # papers skipped: their id is stored from another file
    not_accepted: list[str] = field(default_factory=list)  # withdrawn or rejected submissions skipped
    sources: list[str] = field(default_factory=list)
    files: list[FileReport] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)  # "path: why" for each file that could not be read

    def line(self) -> str:
        parts = [f"{self.added} added", f"{self.updated} updated", f"{self.removed} removed",
                 f"{self.unchanged} unchanged"]
        if self.moved:
            parts.append(f"{self.moved} re-labelled or moved")
        text = ", ".join(parts) + (f" ({_count(self.chunks_embedded, 'chunk')} embedded, "
                                   f"{_count(len(self.sources), 'source')})")
        if self.duplicates:
            text += f"; {_count(len(self.duplicates), 'duplicate abstract')} skipped"
        if self.clashes:
            whose = "its" if len(self.clashes) == 1 else "their"
            text += f"; {len(self.clashes)} skipped: {whose} id is stored from another file"
        if self.not_accepted:
            text += f"; {_count(len(self.not_accepted), 'withdrawn or rejected submission')} skipped"
        skipped = sum(len(f.skipped) for f in self.files)
        title_only = sum(len(f.title_only) for f in self.files)
        if skipped:
            text += f"; {_count(skipped, 'bad record')} skipped"
        if title_only:
            text += f"; {_count(title_only, 'bad record')} kept with {'its' if title_only == 1 else 'their'} title only"
        if self.unreadable:
            text += f"; {_count(len(self.unreadable), 'file')} could not be read"
        return text

    def notes(self) -> list[str]:
        """The details behind `line`, one line each: files not read, records left out, fields ignored. Files of
        one folder (a folder of per-paper JSON) are summed up in one line per kind, naming a few of the files."""
        out = [f"not read: {u}" for u in self.unreadable] + self.clashes
        folders: dict[str, list[FileReport]] = {}
        for f in self.files:
            folders.setdefault(str(Path(f.path).parent) if f.path else "", []).append(f)
        for folder, reports in folders.items():
            noted = [f for f in reports if f.notes()]
            if len(noted) < 2 or not folder:
                out += [n for f in noted for n in f.notes()]
            else:
                out += _folder_notes(Path(folder).name or folder, noted)
        return out


def _named(files: list[FileReport]) -> str:
    """"a.json, b.json … and 795 more": a few of the files a folder's line is about."""
    names = ", ".join(f.name for f in files[:FILES_SHOWN])
    return names + (f" and {len(files) - FILES_SHOWN} more" if len(files) > FILES_SHOWN else "")


def _count(n: int, noun: str) -> str:
    return f"1 {noun}" if n == 1 else f"{n} {noun}s"


def _files(n: int) -> str:
    return _count(n, "file")


def _folder_notes(folder: str, files: list[FileReport]) -> list[str]:
    """`FileReport.notes` summed over the files of one folder: one line per kind, with counts and file names."""
    out = []
    bad = [f for f in files if f.skipped or f.title_only]
    if bad:
        skipped, title_only = sum(len(f.skipped) for f in bad), sum(len(f.title_only) for f in bad)
        counts = ", ".join(part for part in (f"{skipped} records skipped" if skipped else "",
                                             f"{title_only} kept with their title only" if title_only else "")
                           if part)
        first = bad[0]
        reason = (first.skipped + first.title_only)[0].removeprefix(first.path).lstrip(": ")
        out.append(f"{folder}/: {counts} in {_files(len(bad))} ({_named(bad)}; first: {first.name}: {reason})")
    decided = [f for f in files if f.decisions]
    if decided:
        decisions: Counter[str] = sum((f.decisions for f in decided), Counter())
        out.append(f"{folder}/: {sum(decisions.values())} not accepted, skipped: "
                   + ", ".join(f"{d} ×{n}" for d, n in decisions.most_common(IGNORED_SHOWN))
                   + f" (in {_files(len(decided))}: {_named(decided)})")
    conflicted = [f for f in files if f.conflicts]
    if conflicted:
        out.append(f"{folder}/: {sum(len(f.conflicts) for f in conflicted)} repeated ids with a different abstract "
                   f"in {_files(len(conflicted))} (the first is kept): {conflicted[0].conflicts[0]}")
    cleaned = [f for f in files if f.cleaned]
    if cleaned:
        out.append(f"{folder}/: control characters removed from {sum(f.cleaned for f in cleaned)} records "
                   f"in {_files(len(cleaned))}: {_named(cleaned)}")
    ignoring = [f for f in files if f.ignored]
    if ignoring:
        ignored: Counter[str] = sum((f.ignored for f in ignoring), Counter())
        shown = ", ".join(f"{k} ×{n}" for k, n in ignored.most_common(IGNORED_SHOWN))
        rest = len(ignored) - IGNORED_SHOWN
        out.append(f"{folder}/: ignored in {_files(len(ignoring))} ({_named(ignoring)}): {shown}"
                   + (f" and {rest} more fields" if rest > 0 else ""))
    return out


class Loaded(NamedTuple):
    papers: list[Paper]
    sources: list[str]  # file names
    duplicates: list[str]  # "b.txt #1 repeats a.txt #2"
    not_accepted: list[str]  # where each skipped withdrawn or rejected submission was
    files: tuple[FileReport, ...] = ()
    unreadable: tuple[str, ...] = ()  # "path: why" for each file that could not be read


def load_papers(paths: Iterable[Path], known: Mapping[str, Paper] | None = None, strict: bool = False) -> Loaded:
    """Parse every file first (any error aborts before writing); drop repeated papers.

    Abstracts published apart from their program (an {id: abstract} file) are merged into
    the paper with that id, listed in these files or else already stored (`known`); an
    abstract whose paper is listed nowhere is a paper of its own. A file that cannot be read
    at all (permissions, a broken link, a FIFO) is skipped and named, its stored papers kept;
    with `strict` it is an error, as is any failing record.
    """
    files, unreadable = discover_all(list(paths))
    parsed: list[tuple[Path, ParsedFile]] = []
    for f in files:
        try:
            parsed.append((f, read_file(f, strict=strict)))
        except UnreadableFile as exc:
            if strict:
                raise
            unreadable.append(str(exc))
    if unreadable and (strict or not parsed):  # nothing else to ingest, or every file must be read
        source, _, problem = unreadable[0].rpartition(": ")
        raise UnreadableFile(source, problem)
    for where in unreadable:
        log.warning("corpus file not read: %s", where)
    for f, pf in parsed:
        for problem in pf.skipped + pf.title_only:
            log.warning("bad record: %s", problem)
        for problem in pf.conflicts:
            log.warning("repeated id: %s", problem)
    papers: list[Paper] = []
    index: dict[str, int] = {}
    duplicates: list[str] = []

    def add(p: Paper) -> None:
        if p.paper_id in index:
            first = papers[index[p.paper_id]]
            differs = first.abstract and p.abstract and first.abstract != p.abstract
            same = f" (same id {p.paper_id!r}, different abstract; the first is kept)" if differs else ""
            duplicates.append(f"{p.source} #{p.position} repeats {first.source} #{first.position}{same}")
            return
        index[p.paper_id] = len(papers)
        papers.append(p)

    for _, pf in parsed:
        for p in pf.papers:
            add(p)
    for _, pf in parsed:
        for s in pf.abstracts:
            if s.paper_id in index and papers[index[s.paper_id]].source != s.source:
                papers[index[s.paper_id]] = with_abstract(papers[index[s.paper_id]], s.abstract)
            elif s.paper_id not in index and known and s.paper_id in known and known[s.paper_id].source != s.source:
                add(with_abstract(known[s.paper_id], s.abstract))
            else:
                add(supplement_paper(s))
    return Loaded(papers, [f.name for f, _ in parsed], duplicates,
                  [ref for _, pf in parsed for ref in pf.not_accepted],
                  tuple(FileReport.of(f, pf) for f, pf in parsed), tuple(unreadable))


class ChunkRow(NamedTuple):
    """One chunk of a paper as it is written: its id, its verbatim text, its place in the abstract and its metadata."""

    chunk_id: str
    text: str
    start: int
    end: int
    metadata: dict


def paper_chunks(paper: Paper, embedder: TextEmbedder | None) -> list[ChunkRow]:
    """Every chunk of `paper`, as it is written."""
    return batch_chunks([paper], embedder)[0].rows


class PaperChunks(NamedTuple):
    """A paper's abstract sentences and its chunks as they are written, with the word pieces of each chunk's
    indexed text when the embedder gives them (`TextEmbedder.word_pieces`)."""

    paper: Paper
    sentences: list[Span]
    rows: list[ChunkRow]
    pieces: list[WordPieces] | None


def batch_chunks(papers: list[Paper], embedder: TextEmbedder | None) -> list[PaperChunks]:
    """The chunks of each paper.

    Each abstract is tokenized once, in one call for all: its sentences are sized from
    its word pieces, and a chunk's pieces are the abstract's between its two ends.
    """
    sentences = [split_sentences(p.abstract) if p.abstract else [] for p in papers]
    prefixes = [chunk_prefix(p.title) for p in papers]
    tokenized = None if embedder is None else embedder.word_pieces(
        [p.abstract or indexed_text(p.title, "", p.keywords) for p in papers] + prefixes)
    out = []
    for k, (p, spans) in enumerate(zip(papers, sentences)):
        # The abstract's pieces; for a paper without one, its indexed text's (title and keywords).
        whole = tokenized[k] if tokenized is not None else None
        if not p.abstract:  # listed before its abstract is published: one chunk, title and keywords
            chunks = [Chunk(0, 0, 0, "")]
        elif embedder is None:
            chunks = chunk_text(p.abstract, sentences=spans)
        else:
            budget = int(embedder.max_tokens * CHUNK_FILL) - (embedder.count_tokens(p.title) if p.title else 0)
            chunks = chunk_text(p.abstract, max_tokens=max(64, budget), sentences=spans,
                                count_tokens=_sentence_counter(embedder, p.abstract, spans, whole))
        rows = [ChunkRow(chunk_id(p, c.index), c.text, c.start, c.end,
                         chunk_metadata(p, index=c.index, n_chunks=len(chunks), start=c.start, end=c.end))
                for c in chunks]
        prefix = tokenized[len(papers) + k] if tokenized is not None else None
        pieces = None
        if whole is not None and not p.abstract:
            pieces = [whole]
        elif whole is not None and prefix is not None:
            pieces = [_chunk_pieces(prefix, len(prefixes[k]), whole, c) for c in chunks]
        out.append(PaperChunks(p, spans, rows, pieces))
    return out


def _sentence_counter(embedder: TextEmbedder, abstract: str, spans: list[Span],
                      pieces: WordPieces | None) -> Callable[[str], int]:
    """`embedder.count_tokens`, answered for the abstract's sentences from its word pieces when it has them (a
    sentence's pieces and the special tokens); a piece of a sentence too long for the window is counted."""
    if pieces is None or not spans:
        return embedder.count_tokens
    lo = np.searchsorted(pieces.offsets[:, 0], [s.start for s in spans], side="left")
    hi = np.searchsorted(pieces.offsets[:, 1], [s.end for s in spans], side="right")
    specials = embedder.count_tokens("")
    sizes = {abstract[s.start:s.end]: specials + max(0, int(n)) for s, n in zip(spans, hi - lo)}

    def count(text: str) -> int:
        return sizes[text] if text in sizes else embedder.count_tokens(text)

    return count


def _chunk_pieces(prefix: WordPieces, prefix_chars: int, abstract: WordPieces, chunk: Chunk) -> WordPieces:
    """The word pieces of a chunk's indexed text: its prefix's (the title), then the abstract's within the chunk."""
    lo = int(np.searchsorted(abstract.offsets[:, 0], chunk.start, side="left"))
    hi = int(np.searchsorted(abstract.offsets[:, 1], chunk.end, side="right"))
    return WordPieces(np.concatenate([prefix.ids, abstract.ids[lo:hi]]),
                      np.concatenate([prefix.offsets, abstract.offsets[lo:hi] - chunk.start + prefix_chars]))


def ingest(
    paths: Iterable[Path],
    store: Store,
    embedder: TextEmbedder,
    progress: Progress | None = None,
    prune_sources: bool = True,
    strict: bool = False,
    replace: bool = False,
) -> IngestSummary:
    """Bring the store in line with the papers in `paths`; return what changed.

    A source is a file name: a file is the new version of the papers stored from a file of its name. With
    `prune_sources`, papers of the given sources that are no longer in their files are removed; papers of
    other sources are never touched. Two guards keep one file from replacing another's papers unless
    `replace` says so: a file that no longer holds most of the papers stored under its name is refused
    (another year's papers.jsonl, not a new version of this one), and a paper whose id is stored from a file
    this ingest does not read, with another title or abstract, is skipped and named (CSV exports numbering
    their rows 1, 2, 3 …). The steps: read what is stored, parse every file (nothing is written if one is
    refused), plan the changes, prune removed papers, then write them.
    """
    stored = _stored_state(store)
    loaded = load_papers(paths, known={pid: s.fields for pid, s in stored.items() if s.fields is not None},
                         strict=strict)
    if not replace:
        _refuse_other_files(loaded, stored)
    return ingest_loaded(loaded, store, embedder, progress, prune_sources, stored=stored, replace=replace)


def ingest_loaded(loaded: Loaded, store: Store, embedder: TextEmbedder, progress: Progress | None = None,
                  prune_sources: bool = True, stored: dict[str, _PaperState] | None = None,
                  replace: bool = False) -> IngestSummary:
    """`ingest` of papers already read (`load_papers`, perhaps relabelled: a server library's upload, which
    replaces an earlier upload of its name whatever it holds); `stored` is what the store holds, when the
    caller read it already; `replace` lets a paper take the place of one of its id stored from another file."""
    stored = _stored_state(store) if stored is None else stored
    summary = IngestSummary(duplicates=loaded.duplicates, not_accepted=loaded.not_accepted, sources=loaded.sources,
                            files=list(loaded.files), unreadable=list(loaded.unreadable))
    if not replace:
        loaded = _without_clashes(loaded, stored, summary)
    for d in loaded.duplicates:
        log.warning("duplicate abstract skipped: %s", d)
    if loaded.not_accepted:
        log.info("%d withdrawn or rejected submissions skipped, first at %s", len(loaded.not_accepted),
                 loaded.not_accepted[0])
    moved = LegacySentences(store).migrate() if stored else 0
    if moved:
        log.info("sentence vectors of %d papers moved to the compact snippets collection", moved)
    changes = _plan_changes(loaded.papers, stored, store.snippets.hashes() if stored else set(), summary)
    if prune_sources:
        _prune(changes, stored, {p.paper_id for p in loaded.papers}, loaded.sources, summary)
    summary.chunks_embedded = _write(changes, store, embedder, progress, summary)
    return summary


# A file whose name is stored but which holds less than this share of the papers stored under it is taken for
# another file of that name, not its new version (an edited untitled abstract, which gets a new id in the
# same place, counts as kept).
KEPT_SHARE = 0.5


def _refuse_other_files(loaded: Loaded, stored: dict[str, _PaperState]) -> None:
    """An InputError for the first file that would take the place of most papers stored under its name."""
    wanted = {p.paper_id for p in loaded.papers}
    edited_places = {(p.source, p.position) for p in loaded.papers
                     if p.paper_id not in stored and p.paper_id == text_id(p.abstract or p.title)}
    by_source: dict[str, list[tuple[str, _PaperState]]] = defaultdict(list)
    for pid, state in stored.items():
        by_source[state.placement[0]].append((pid, state))
    paths = {f.name: f.path for f in loaded.files}
    for source in loaded.sources:
        held = by_source.get(source, [])
        lost = [pid for pid, state in held if pid not in wanted and state.placement not in edited_places]
        if held and len(lost) > (1 - KEPT_SHARE) * len(held):
            gone = (f"the paper stored from a file named {source!r} is not in this one" if len(held) == 1 else
                    f"{len(lost)} of the {len(held)} papers stored from a file named {source!r} are not in this one")
            raise InputError(paths.get(source) or source,
                             f"{gone}, so it looks like another file of the same name (files are told apart by "
                             f"name); ingesting it would remove {'it' if len(lost) == 1 else 'them'}. Rename it to "
                             "keep both, or run `paperbot ingest --replace` to make it the new version")


def _without_clashes(loaded: Loaded, stored: dict[str, _PaperState], summary: IngestSummary) -> Loaded:
    """`loaded` without the papers whose id is stored from a file this ingest does not read, with another
    title or abstract (each named in `summary.clashes`); one of the same text has moved, and stays."""
    sources = set(loaded.sources)
    kept = []
    for p in loaded.papers:
        state = stored.get(p.paper_id)
        # (a damaged record names no file: its paper is written again)
        if state and state.placement[0] and state.placement[0] != p.source and state.placement[0] not in sources \
                and not state.complete(p.content_hash):
            where = f"{state.placement[0]} #{state.placement[1]}"
            summary.clashes.append(f"{p.source} #{p.position} skipped: its id {p.paper_id!r} is stored from {where} "
                                   "with another title or abstract")
            continue
        kept.append(p)
    return loaded._replace(papers=kept) if len(kept) < len(loaded.papers) else loaded


@dataclass
class _Changes:
    """What one ingest writes: papers to embed, old versions to drop, metadata to update in place."""

    to_embed: list[Paper] = field(default_factory=list)
    backfill: list[Paper] = field(default_factory=list)  # stored before sentence vectors were: only those computed
    relabel_ids: list[str] = field(default_factory=list)
    relabel_meta: list[dict] = field(default_factory=list)
    stale_ids: list[str] = field(default_factory=list)
    stale_versions: list[str] = field(default_factory=list)

    def drop_other_versions(self, state: _PaperState, content_hash: str) -> None:
        self.stale_ids.extend(state.ids_except(content_hash))
        self.stale_versions.extend(h for h in state.by_hash if h != content_hash)

    @property
    def any(self) -> bool:
        return bool(self.to_embed or self.stale_ids or self.relabel_ids)


def _plan_changes(papers: list[Paper], stored: dict[str, _PaperState], with_sentences: set[str],
                  summary: IngestSummary) -> _Changes:
    """Compare each parsed paper with what the store holds of it, and count it in `summary`."""
    changes = _Changes()
    to_records = 0  # relabelled chunks stored one metadata key per field
    for p in papers:
        state = stored.get(p.paper_id)
        if not (state and state.complete(p.content_hash)):
            changes.to_embed.append(p)
            if state:
                summary.updated += 1
                changes.drop_other_versions(state, p.content_hash)
            else:
                summary.added += 1
            continue
        changes.drop_other_versions(state, p.content_hash)
        if p.abstract and p.content_hash not in with_sentences:
            changes.backfill.append(p)
        chunks = state.chunks_of(p.content_hash)
        meta_changed = any(c.meta_hash != p.meta_hash for c in chunks)
        # Chunks stored before metadata had its own hash are upgraded quietly.
        if meta_changed and all(c.meta_hash for c in chunks):
            summary.updated += 1
        else:
            summary.unchanged += 1
        if state.placement != (p.source, p.position):
            summary.moved += 1
        # Chunks stored one metadata key per field move to the record layout, quietly, without embedding.
        if meta_changed or state.placement != (p.source, p.position) or not all(c.in_record for c in chunks):
            for chunk in chunks:
                changes.relabel_ids.append(chunk.chunk_id)
                changes.relabel_meta.append(chunk.moved_to(p))
                to_records += not chunk.in_record
    if to_records:
        log.info("%d chunks stored one metadata key per field (an earlier version) move to the record layout, "
                 "without embedding", to_records)
    return changes


def _prune(changes: _Changes, stored: dict[str, _PaperState], wanted: set[str], sources: list[str],
           summary: IngestSummary) -> None:
    """Papers of these sources that their files no longer hold are removed.

    An edited untitled abstract gets a new id; one that takes the place of a removed paper is reported
    as an update of it (a paper with an id of its own in that place is another paper).
    """
    new_places = {(p.source, p.position) for p in changes.to_embed
                  if p.paper_id not in stored and p.paper_id == text_id(p.abstract or p.title)}
    for pid, state in stored.items():
        if pid not in wanted and state.placement[0] in sources:
            changes.stale_ids.extend(state.all_ids())
            changes.stale_versions.extend(state.by_hash)
            if state.placement in new_places:
                new_places.discard(state.placement)
                summary.added -= 1
                summary.updated += 1
            else:
                summary.removed += 1


def _write(changes: _Changes, store: Store, embedder: TextEmbedder, progress: Progress | None,
           summary: IngestSummary) -> int:
    """New chunks first, then metadata, then deletions, between two version bumps; returns chunks embedded.

    A run killed after its last write never recorded the new version; the next run finishes that job too.
    """
    changed = changes.any or store.write_in_progress()
    if changed:
        store.bump_version(writing=True)
    total_chunks = 0
    to_embed = changes.to_embed
    if progress:
        progress(0, len(to_embed))
    # Each batch is written after it is embedded, not in a thread beside the next batch's embedding: Chroma's
    # embedded writes hold the GIL, and beside the model's threads on every core a write held it 3-5 times as
    # long, stalling a bot's event loop over 100 ms dozens of times in one /reindex, for no faster ingest on
    # two cores (docs/benchmarks.md, "The event loop during a /reindex").
    for i, j in _batches(len(to_embed), store.writes):
        batch = to_embed[i:j]
        started = time.perf_counter()
        encoded = _encode(batch, embedder)
        embedded = time.perf_counter()
        total_chunks += len(encoded.rows)
        _store_batch(encoded, store)
        summary.embed_seconds += embedded - started
        summary.write_seconds += time.perf_counter() - embedded
        if progress:
            progress(i + len(batch), len(to_embed))
    if to_embed:
        log.info("%d papers: chunked and embedded in %.1f s, written in %.1f s", len(to_embed),
                 summary.embed_seconds, summary.write_seconds)
    if changes.backfill:
        log.info("computing snippet vectors for %d papers stored by an earlier version", len(changes.backfill))
        for i, j in _batches(len(changes.backfill), store.writes):
            _store_batch(_encode(changes.backfill[i:j], embedder), store, write_chunks=False)
        summary.snippets_added = len(changes.backfill)
    if changes.relabel_ids:
        store.update_metadata(changes.relabel_ids, changes.relabel_meta)
    if changes.stale_ids:
        store.delete(changes.stale_ids)
    if changes.stale_versions:
        store.snippets.delete(changes.stale_versions)
    if changed:
        store.bump_version()
    return total_chunks


def _batches(n: int, writes: Writes) -> Iterator[tuple[int, int]]:
    """(start, end) of each batch of `n` papers to embed (see EMBED_BATCH_PAPERS)."""
    start = 0
    while start < n:
        size = EMBED_BATCH_PAPERS if start == 0 or writes is Writes.SHARED else LONE_EMBED_BATCH_PAPERS
        yield start, min(n, start + size)
        start += size


class _Encoded(NamedTuple):
    """One batch's rows (paper, chunk), their vectors and the papers' sentence rows."""

    rows: list[tuple]
    vectors: np.ndarray
    snippets: list[tuple]


def _encode(batch: list[Paper], embedder: TextEmbedder) -> _Encoded:
    """Embed the chunks of `batch` and, from the same forward pass, every sentence of each abstract.

    A sentence's vector is pooled from the first chunk that holds it whole; one no
    chunk holds whole (a sentence longer than the window) is encoded on its own.
    """
    chunked = batch_chunks(batch, embedder)
    rows = [(c.paper, row) for c in chunked for row in c.rows]
    sentences = {c.paper.paper_id: c.sentences for c in chunked}
    texts, spans, owners = [], [], []
    assigned: set[tuple[str, int]] = set()
    for p, row in rows:
        indexed = indexed_text(p.title, row.text, p.keywords)
        offset = len(indexed) - len(row.text)  # the title before the chunk's own text
        lo, hi = row.start, row.end
        mine = [j for j, s in enumerate(sentences[p.paper_id])
                if lo <= s.start and s.end <= hi and (p.paper_id, j) not in assigned]
        assigned.update((p.paper_id, j) for j in mine)
        texts.append(indexed)
        spans.append([(sentences[p.paper_id][j].start - lo + offset, sentences[p.paper_id][j].end - lo + offset)
                      for j in mine])
        owners.append([(p.paper_id, j) for j in mine])
    per_chunk = [c.pieces for c in chunked]
    pieces = ([piece for ps in per_chunk if ps is not None for piece in ps]
              if all(ps is not None for ps in per_chunk) else None)
    vectors, span_vectors = embedder.encode_spans(texts, spans, pieces=pieces)
    pooled = {key: vector for keys, block in zip(owners, span_vectors) for key, vector in zip(keys, block)
              if np.any(vector)}
    by_id = {p.paper_id: p for p in batch}
    keys = [(p.paper_id, j) for p in batch for j in range(len(sentences[p.paper_id]))]
    alone = [k for k in keys if k not in pooled]
    if alone:
        texts_alone = [by_id[pid].abstract[sentences[pid][j].start:sentences[pid][j].end] for pid, j in alone]
        pooled.update(zip(alone, embedder.encode(texts_alone)))
    snippets = [(p.paper_id, p.content_hash, [(s.start, s.end) for s in sentences[p.paper_id]],
                 np.asarray([pooled[(p.paper_id, j)] for j in range(len(sentences[p.paper_id]))], dtype=np.float32))
                for p in batch if sentences[p.paper_id]]
    return _Encoded(rows, vectors, snippets)


def _store_batch(encoded: _Encoded, store: Store, write_chunks: bool = True) -> None:
    """Write one encoded batch: its chunks (unless only the sentence rows are missing), then its sentences."""
    if write_chunks:
        rows = encoded.rows
        store.upsert([r.chunk_id for _, r in rows], encoded.vectors, [r.metadata for _, r in rows])
    store.snippets.upsert(encoded.snippets)


class _PaperState:
    """What the store holds of one paper: its chunks grouped by embedded-content version."""

    def __init__(self) -> None:
        self.by_hash: dict[str, list[StoredChunk]] = defaultdict(list)
        self.placement: tuple[str, int] = ("", 0)
        self.fields: Paper | None = None

    def add(self, chunk: StoredChunk) -> None:
        self.by_hash[chunk.content_hash].append(chunk)
        self.placement = (chunk.fields.source, chunk.fields.position)
        self.fields = chunk.fields

    def rekey_legacy(self) -> None:
        """Chunks stored before the embed hash existed: find their embed hash from their own text."""
        for old in [h for h, chunks in self.by_hash.items() if chunks[0].legacy]:
            chunks = self.by_hash[old]
            if is_complete(chunks):
                new = assemble(chunks).embed_hash
                if new != old:
                    self.by_hash[new].extend(self.by_hash.pop(old))

    def complete(self, content_hash: str) -> bool:
        return is_complete(self.by_hash.get(content_hash, []))

    def chunks_of(self, content_hash: str) -> list[StoredChunk]:
        return self.by_hash.get(content_hash, [])

    def ids_except(self, content_hash: str) -> list[str]:
        return [c.chunk_id for h, chunks in self.by_hash.items() if h != content_hash for c in chunks]

    def all_ids(self) -> list[str]:
        return [c.chunk_id for chunks in self.by_hash.values() for c in chunks]


def _stored_state(store: Store) -> dict[str, _PaperState]:
    state: dict[str, _PaperState] = defaultdict(_PaperState)
    legacy: set[str] = set()
    for chunk in store.iter_chunks(with_text=False):
        state[chunk.paper_id].add(chunk)
        if chunk.legacy:
            legacy.add(chunk.paper_id)
    if legacy:  # their texts are needed once, to re-key them
        state = {pid: s for pid, s in state.items() if pid not in legacy}
        for chunk in store.iter_chunks(with_text=True):
            if chunk.paper_id in legacy:
                state.setdefault(chunk.paper_id, _PaperState()).add(chunk)
        for pid in legacy:
            state[pid].rekey_legacy()
    return state
