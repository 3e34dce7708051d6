"""The whole store checked, read once (what `paperbot doctor` runs in its child process, bot/doctor.py).

Every chunk is read into a serving view (so the keyword index is built as a bot would build it); each paper
must have all the chunks of one version; every chunk's vector must read back and a sample spread over the
index must be found by searching with its own vector (a damaged HNSW file shows in one or the other); and
the view saved beside the store must be this content version's and equal to what was just read. The report
is a dict of plain values (it crosses a pipe as JSON); `kind` is None when the store could be read.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np

from paperbot.errors import (
    CollectionMissingError,
    ModelMismatchError,
    StoreError,
    StoreLockedError,
    StoreUnavailableError,
)
from paperbot.records import StoredChunk, is_complete
from paperbot.settings import StoreSettings

PROGRESS_EVERY = 5000  # chunks read between two progress lines of the store check
SELF_SEARCH_SAMPLE = 20  # chunks the store check searches for with their own vectors
VECTOR_PAGE = 2000  # chunk vectors the store check reads between two progress lines


def inspect_store(request: dict, progress: Callable[[str], None] = lambda _: None) -> dict:
    """Open the store read-only and look at everything (runs in the child process); `progress`
    hears how far it got, now and then."""
    from ingest.store import Store, folder_problem

    raw = request["store"]
    s = StoreSettings.from_wire(raw)
    if not s.is_server and (problem := folder_problem(s.path)):
        return {"kind": "unusable", "error": f"CHROMA_PATH={s.path} cannot be a folder: {problem}"}
    if not s.is_server and not (s.path / "chroma.sqlite3").exists():
        return {"kind": "missing", "collection": s.collection}
    try:
        store = Store(s, request["model"], request["dimension"], create=False)
    except ModelMismatchError as exc:
        return {"kind": "mismatch", "error": str(exc)}
    except StoreLockedError as exc:
        return {"kind": "locked", "error": str(exc)}
    except StoreUnavailableError as exc:
        return {"kind": "unavailable", "error": str(exc)}
    except CollectionMissingError:
        return {"kind": "missing", "collection": s.collection}
    except StoreError as exc:
        return {"kind": "damaged", "error": str(exc)}
    try:
        with store:
            report = _inspect(store, request["dimension"], progress)
            if request.get("view_file") and report.get("kind") is None:
                report["view"] = _saved_view(store, Path(request["view_file"]), report.pop("_view"))
            report.pop("_view", None)
            return report
    except StoreUnavailableError as exc:
        return {"kind": "unavailable", "error": str(exc)}
    except StoreError as exc:
        return {"kind": "damaged", "error": str(exc)}


def _saved_view(store, path: Path, built) -> dict:
    """Whether the view saved beside the store is this content version's and equals `built` (just read)."""
    from retrieval.view import CorpusView, ViewFileError, store_identity

    out = {"path": str(path), "papers": len(built.papers)}
    try:
        saved = CorpusView.load(path, built.version, store_identity(store.settings))
    except ViewFileError as exc:
        return {**out, "state": exc.kind, "problem": str(exc)}
    if saved.chunk_ids != built.chunk_ids:
        return {**out, "state": "different", "problem": f"{len(saved.chunk_ids)} chunks saved, "
                f"{len(built.chunk_ids)} stored"}
    if saved.papers != built.papers:
        changed = next(pid for pid in built.papers if saved.papers.get(pid) != built.papers[pid])
        return {**out, "state": "different", "problem": f"paper {changed} differs"}
    return {**out, "state": "current"}


def _inspect(store, dimension: int, progress: Callable[[str], None]) -> dict:
    from retrieval.view import CorpusView

    version = store.content_version()
    chunks = store.count()
    by_paper: dict[str, dict[str, list[StoredChunk]]] = defaultdict(lambda: defaultdict(list))

    def each_chunk():  # one pass: the completeness check sees every chunk on its way into the view
        for n, chunk in enumerate(store.iter_chunks(), start=1):
            by_paper[chunk.paper_id][chunk.content_hash].append(replace(chunk, text=""))
            if n % PROGRESS_EVERY == 0:
                progress(f"read {n} of {chunks} chunks")
            yield chunk

    view = CorpusView.from_chunks(each_chunk(), version)
    incomplete = sorted(pid for pid, versions in by_paper.items()
                        if not any(is_complete(group) for group in versions.values()))
    problem = vector_problem(store, view, progress) if view.chunk_ids else ""
    stable = store.content_version() == version
    return {"kind": None, "dimension": dimension, "chunks": chunks, "papers": len(by_paper),
            "incomplete": incomplete, "indexed": len(view.chunk_ids), "version": version,
            "version_stable": stable, "_view": view,
            "vector_problem": problem if stable else ""}  # an ingest beside the check moved chunks: not damage


def vector_problem(store, view, progress: Callable[[str], None] = lambda _: None) -> str:
    """What is wrong with the chunks' vector index, or "" when every vector reads back and the index finds them.

    Every vector is read (as filtered searches read them), then a sample spread over the whole
    index, first chunk to last, is searched for with its own vector: a damaged index file shows
    in one or the other.
    """
    chunk_ids = view.chunk_ids
    pages = []
    for start in range(0, len(chunk_ids), VECTOR_PAGE):
        ids = chunk_ids[start:start + VECTOR_PAGE]
        got = store.get_embeddings(ids)
        page = np.zeros((len(ids), store.dimension), dtype=np.float32)  # a vector that does not read back stays 0
        for k, cid in enumerate(ids):
            if cid in got:
                page[k] = got[cid]
        pages.append(page)
        progress(f"read {start + len(page)} of {len(chunk_ids)} chunk vectors")
    vectors = np.concatenate(pages)
    norms = np.linalg.norm(vectors, axis=1)
    unreadable = np.flatnonzero(~np.isfinite(norms) | (norms < 1e-6))
    if len(unreadable):
        return (f"{len(unreadable)} of {len(norms)} chunk vectors are missing or unreadable, "
                f"e.g. {chunk_ids[unreadable[0]]}")
    unit = vectors / norms[:, None]
    row_of = {cid: k for k, cid in enumerate(chunk_ids)}
    rows = np.unique(np.linspace(0, len(unit) - 1, min(SELF_SEARCH_SAMPLE, len(unit))).astype(int))
    lost = []
    for row in rows:
        found = [row_of[cid] for cid, _ in store.query(unit[row], n=10) if cid in row_of]
        if not (found and float(np.max(unit[found] @ unit[row])) > 0.999):  # itself, or a chunk with its vector
            lost.append(chunk_ids[row])
    if len(lost) > len(rows) // 10:
        return (f"searching for {len(rows)} stored chunks with their own vectors did not find {len(lost)} "
                f"of them, e.g. {lost[0]}")
    return ""
