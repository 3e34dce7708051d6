"""The serving view saved beside the store: read back equal, rebuilt when stale or damaged, written atomically."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

import numpy as np
import pytest

from benchmarks import shapes
from retrieval.library import Library
from retrieval.search import Retriever
from retrieval.view import CorpusView, ViewFileError, read_header, store_identity, view_file
from tests.conftest import make_settings
from tests.fakes import HashEmbedder

QUESTIONS = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "bundled_questions.jsonl"


def hits_of(result) -> list[tuple]:
    return [(h.paper_id, round(h.score, 5), tuple((q.start, q.end) for q in h.quotes), h.relevant)
            for h in result.hits]


def test_a_saved_view_reads_back_equal_and_searches_the_same(library, tmp_path):
    store = library.store
    built = CorpusView.from_store(store, store.content_version())
    path = tmp_path / "view.bin"
    built.save(path, store_identity(store.settings))
    loaded = CorpusView.load(path, built.version, store_identity(store.settings))
    assert loaded.papers == built.papers and list(loaded.papers) == list(built.papers)
    assert loaded.chunk_ids == built.chunk_ids
    assert np.array_equal(loaded.chunk_paper_idx, built.chunk_paper_idx)
    assert isinstance(loaded.keyword.postings, np.memmap)  # mapped from the file, not copied
    for query in ("BMT", "fine-tune masking weights", "87.43%", "NV-CoT reasoning", "nothing-like-this"):
        tokens = query.lower().split()
        assert np.array_equal(loaded.keyword.scores(tokens), built.keyword.scores(tokens))
    assert loaded.keyword.terms() == built.keyword.terms()

    in_memory = Retriever(store, library.embedder, library.settings.retrieval)
    from_file = Retriever(store, library.embedder, library.settings.retrieval, view_file=path)
    cases = [json.loads(line)["question"] for line in QUESTIONS.read_text().splitlines() if line]
    for question in cases[:12] + ["what is a good recipe for sourdough bread?"]:
        assert hits_of(from_file.search(question)) == hits_of(in_memory.search(question)), question
    assert from_file.view().papers == in_memory.view().papers


@pytest.fixture
def lib(tmp_path):
    with Library(make_settings(tmp_path), embedder=HashEmbedder()) as lib:
        records = [{"id": f"p{i}", "title": f"Paper {i}", "authors": ["Wei Zhang"], "type": "poster",
                    "abstract": f"Sparse masks over weights, study number {i}. A second sentence about it."}
                   for i in range(12)]
        lib.ingest([shapes.write_json(tmp_path / "c" / "flat.json", records)])
        yield lib


def test_a_store_without_a_view_file_builds_it_once_with_a_note(lib, caplog):
    path = lib.retriever.view_file
    assert path == lib.settings.store.path / "paperbot-view-papers.bin" and not path.exists()
    with caplog.at_level(logging.INFO, logger="retrieval.search"):
        first = lib.search("sparse masks")
    assert "no saved serving view" in caplog.text and path.exists()
    header, _ = read_header(path)
    assert header["version"] == lib.store.content_version() and header["papers"] == 12
    # A new process on the same store reads the file instead of rebuilding.
    caplog.clear()
    again = Retriever(lib.store, lib.embedder, lib.settings.retrieval, view_file=path)
    with caplog.at_level(logging.INFO, logger="retrieval.search"):
        assert hits_of(again.search("sparse masks")) == hits_of(first)
    assert "read the serving view" in caplog.text and "building" not in caplog.text


def test_a_stale_view_file_is_rebuilt_and_replaced(lib, tmp_path, caplog):
    lib.search("sparse masks")
    path = lib.retriever.view_file
    old = read_header(path)[0]["version"]
    lib.ingest([shapes.write_json(tmp_path / "c" / "flat.json", [
        {"id": "new", "title": "Ocean currents", "abstract": "We model ocean currents with neural operators."}])],
               replace=True)
    with pytest.raises(ViewFileError) as stale:
        CorpusView.load(path, lib.store.content_version(), store_identity(lib.store.settings))
    assert stale.value.kind == "stale"
    fresh = Retriever(lib.store, lib.embedder, lib.settings.retrieval, view_file=path)
    with caplog.at_level(logging.INFO, logger="retrieval.search"):
        assert [h.paper_id for h in fresh.search("ocean currents neural operators").hits] == ["new"]
    assert "is stale" in caplog.text
    assert read_header(path)[0]["version"] == lib.store.content_version() != old


@pytest.mark.parametrize("damage", ["flip a byte", "truncate", "empty", "garbage header"])
def test_a_damaged_view_file_is_rebuilt_with_a_warning(lib, caplog, damage):
    expected = hits_of(lib.search("sparse masks"))
    path = lib.retriever.view_file
    data = bytearray(path.read_bytes())
    if damage == "flip a byte":
        data[len(data) // 3] ^= 0x5A
    elif damage == "truncate":
        data = data[:len(data) // 2]
    elif damage == "empty":
        data = bytearray()
    else:
        header_at = data.rfind(b'{"format"')
        data[header_at:header_at + 9] = b"not json!"
    path.write_bytes(bytes(data))
    with pytest.raises(ViewFileError) as bad:
        CorpusView.load(path, lib.store.content_version(), store_identity(lib.store.settings))
    assert bad.value.kind == "damaged"
    fresh = Retriever(lib.store, lib.embedder, lib.settings.retrieval, view_file=path)
    with caplog.at_level(logging.INFO, logger="retrieval.search"):
        assert hits_of(fresh.search("sparse masks")) == expected
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings and "rebuilding it from the store" in warnings[0].getMessage()
    CorpusView.load(path, lib.store.content_version(), store_identity(lib.store.settings))  # written again, whole


def test_another_format_or_store_is_not_read(lib):
    lib.search("sparse masks")
    path, version = lib.retriever.view_file, lib.store.content_version()
    with pytest.raises(ViewFileError) as foreign:
        CorpusView.load(path, version, "server:8000/papers")
    assert foreign.value.kind == "foreign"
    import retrieval.view as view_module

    old = view_module.FORMAT
    view_module.FORMAT = old + 1
    try:
        with pytest.raises(ViewFileError) as outdated:
            CorpusView.load(path, version, store_identity(lib.store.settings))
    finally:
        view_module.FORMAT = old
    assert outdated.value.kind == "outdated"


def test_concurrent_writers_never_leave_a_partial_file(lib, tmp_path):
    store = lib.store
    view = CorpusView.from_store(store, store.content_version())
    path = tmp_path / "shared" / "view.bin"
    view.save(path, store_identity(store.settings))
    errors: list[BaseException] = []
    stop = threading.Event()

    def write() -> None:
        try:
            for _ in range(15):
                view.save(path, store_identity(store.settings))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def read() -> None:
        while not stop.is_set():
            try:
                got = CorpusView.load(path, view.version, store_identity(store.settings))
                assert got.chunk_ids == view.chunk_ids
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)
                return

    readers = [threading.Thread(target=read) for _ in range(2)]
    writers = [threading.Thread(target=write) for _ in range(3)]
    for t in readers + writers:
        t.start()
    for t in writers:
        t.join()
    stop.set()
    for t in readers:
        t.join()
    assert errors == []
    assert sorted(p.name for p in path.parent.iterdir()) == ["view.bin"]  # no temporary file left


def test_no_view_is_saved_while_an_ingest_is_writing(lib):
    lib.store.bump_version(writing=True)  # as an ingest does before its first write
    lib.search("sparse masks")
    assert not lib.retriever.view_file.exists()
    lib.store.bump_version()
    fresh = Retriever(lib.store, lib.embedder, lib.settings.retrieval, view_file=lib.retriever.view_file)
    fresh.search("sparse masks")
    assert lib.retriever.view_file.exists()


def test_view_file_lives_beside_an_embedded_store_or_in_the_cache_for_a_server(tmp_path):
    embedded = make_settings(tmp_path, CHROMA_COLLECTION="lab")

    remote = make_settings(tmp_path, CHROMA_HOST="chroma.lab", CHROMA_PORT="8001").store
    local = embedded.store

    assert view_file(local, embedded.cache_dir) == embedded.store.path / "paperbot-view-lab.bin"
    assert view_file(remote, embedded.cache_dir) == embedded.cache_dir / "views" / "chroma.lab-8001-papers.bin"
    assert store_identity(remote) == "chroma.lab:8001/papers" != store_identity(local)


def test_every_paper_field_survives_the_file_nested_slots_included(tmp_path):
    from dataclasses import fields as dataclass_fields

    from paperbot.records import Paper, Slot
    from retrieval.keyword import KeywordIndex

    full = Paper(paper_id="p:1", source="program.json", position=3, abstract="We study “quotes” and $\\beta$.",
                 label="β-DPO", title="$\\beta$-DPO", authors=("Emanuele Rodolà", "Wei Zhang"),
                 affiliations=("Sapienza", ""), url="https://openreview.net/forum?id=1", venue="NeurIPS 2026 oral",
                 links=("https://github.com/x/y",), keywords=("alignment",), area="Deep Learning",
                 subarea="Alignment", presentation="oral", track="Main", tldr="short", pdf_url="https://a/b.pdf",
                 site_url="https://neurips.cc/1",
                 slots=(Slot("Oral 1A", "2026-12-08T10:00:00-08:00", "2026-12-08T10:15:00-08:00", "Hall A", "",
                             "oral"), Slot(session="Poster 2", room="Hall C", poster_position="#412", kind="poster")),
                 bibtex="@inproceedings{x, title={y}}", title_zh="β-DPO 中文", library="222222222222222222")
    unset = [f.name for f in dataclass_fields(Paper) if getattr(full, f.name) == f.default]
    assert unset == [], "give every field a value, so that the file is shown to keep it"
    bare = Paper(paper_id="p2", source="program.json", position=4, abstract="", label="Untitled")
    ids = ["p:1:abc:0", "p2:def:0"]
    view = CorpusView("v1", ids, {full.paper_id: full, bare.paper_id: bare},
                      KeywordIndex.build(ids, ["beta dpo quotes", "untitled"]), chunk_paper=["p:1", "p2"])
    view.save(tmp_path / "v.bin", "embedded/papers")
    loaded = CorpusView.load(tmp_path / "v.bin", "v1", "embedded/papers")
    assert loaded.papers == view.papers
    assert isinstance(loaded.papers["p:1"].slots[0], Slot) and isinstance(loaded.papers["p:1"].authors, tuple)


def test_searches_beside_a_rebuild_answer_from_the_current_view(lib, tmp_path):
    """While one thread builds the new version's view, others do not wait for it (a bot's worker threads)."""
    lib.search("sparse masks")
    before = lib.retriever.view()
    lib.ingest([shapes.write_json(tmp_path / "c" / "flat.json", [
        {"id": "new", "title": "Ocean currents", "abstract": "We model ocean currents with neural operators."}])],
               replace=True)
    done: list = []
    with lib.retriever._view_lock:  # as the thread building the new view holds it
        t = threading.Thread(target=lambda: done.append(lib.search("ocean currents neural operators")))
        t.start()
        t.join(30)
        assert done and lib.retriever.view() is before
    assert "new" not in {h.paper_id for h in done[0].hits}  # the view it had
    assert [h.paper_id for h in lib.search("ocean currents neural operators").hits][:1] == ["new"]
