"""Incremental ingest into real Chroma: idempotency, updates, deletions, failures, model pinning."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ingest.store import Store
from paperbot.errors import InputError, ModelMismatchError
from retrieval.library import Library
from tests.conftest import make_settings
from tests.fakes import HashEmbedder

ABSTRACTS = [
    "We propose BMT, a bit mask over weights that matches full fine-tuning. It zeroes 0.05% of weights.",
    "Markov decision problems are solved via dynamic programming. We study Bellman residual minimization.",
    "Video generation models fail to follow physics. We propose HiPhy, a hierarchical physical alignment.",
    "Formulaic alpha discovery is a core challenge in trading. We propose AlphaPareto, which finds sets of alphas.",
]


def corpus_file(folder: Path, name: str, abstracts: list[str], header: str = "NeurIPS 2026 Papers") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(header + "\n\n" + "\n\n".join(abstracts) + "\n", encoding="utf-8")
    return path


def stored(lib: Library) -> dict[str, tuple[str, int, int]]:
    """paper id → (source, position, chunk count) as the store holds it."""
    out: dict[str, list] = {}
    for rec in lib.store.iter_chunks(with_text=False):
        entry = out.setdefault(rec.paper_id, [rec.fields.source, rec.fields.position, 0])
        entry[2] += 1
    return {k: tuple(v) for k, v in out.items()}


@pytest.fixture
def lib(tmp_path):
    with Library(make_settings(tmp_path), embedder=HashEmbedder()) as lib:
        yield lib


def test_unchanged_corpus_reingests_without_embedding(lib, tmp_path):
    f = corpus_file(tmp_path / "c", "a.txt", ABSTRACTS)
    first = lib.ingest([f])
    assert (first.added, first.updated, first.removed, first.unchanged) == (4, 0, 0, 0)
    assert first.embed_seconds > 0 and first.write_seconds > 0  # what `paperbot ingest` logs and benchmarks read
    embedded, before, version = lib.embedder.encoded, stored(lib), lib.store.content_version()
    second = lib.ingest([f])
    assert (second.added, second.updated, second.removed, second.unchanged) == (0, 0, 0, 4)
    assert lib.embedder.encoded == embedded, "an unchanged corpus must not be embedded again"
    assert second.embed_seconds == second.write_seconds == 0
    assert stored(lib) == before
    assert lib.store.content_version() == version, "nothing written, so keyword indexes stay valid"


def test_changed_paper_is_replaced_and_removed_paper_deleted(lib, tmp_path):
    folder = tmp_path / "c"
    lib.ingest([corpus_file(folder, "a.txt", ABSTRACTS)])
    edited = ABSTRACTS[0].replace("0.05%", "0.07%")
    summary = lib.ingest([corpus_file(folder, "a.txt", [edited, ABSTRACTS[1], ABSTRACTS[2]])])
    assert (summary.added, summary.updated, summary.removed, summary.unchanged) == (0, 1, 1, 2)
    texts = {r.text for r in lib.store.iter_chunks()}
    assert any("0.07%" in t for t in texts)
    assert not any("0.05%" in t or "AlphaPareto" in t for t in texts)
    assert len(stored(lib)) == 3
    assert lib.search("AlphaPareto alpha discovery trading").hits[0].label != "AlphaPareto"


def test_record_with_its_own_id_is_updated_in_place(lib, tmp_path):
    path = tmp_path / "c" / "r.jsonl"
    path.parent.mkdir()
    path.write_text(json.dumps({"id": "p1", "title": "Masks", "abstract": ABSTRACTS[0]}) + "\n", encoding="utf-8")
    lib.ingest([path])
    path.write_text(json.dumps({"id": "p1", "title": "Bit masks", "abstract": ABSTRACTS[0]}) + "\n", encoding="utf-8")
    summary = lib.ingest([path])
    assert (summary.added, summary.updated, summary.removed) == (0, 1, 0)
    assert stored(lib).keys() == {"p1"}
    assert lib.paper("p1").label == "Bit masks"


def test_reordering_moves_papers_without_embedding(lib, tmp_path):
    folder = tmp_path / "c"
    lib.ingest([corpus_file(folder, "a.txt", ABSTRACTS)])
    embedded = lib.embedder.encoded
    ids_before = set(stored(lib))
    summary = lib.ingest([corpus_file(folder, "a.txt", list(reversed(ABSTRACTS)))])
    assert lib.embedder.encoded == embedded
    assert summary.unchanged == 4 and summary.moved == 4
    assert set(stored(lib)) == ids_before
    positions = {lib.paper(pid).label: lib.paper(pid).position for pid in ids_before}
    assert positions["BMT"] == 4 and positions["AlphaPareto"] == 1


def test_a_record_skipped_before_others_moves_them_to_their_place_without_embedding(lib, tmp_path):
    path = tmp_path / "c" / "rows.csv"
    path.parent.mkdir()
    rows = [f'x{i},T{i},"{a}"' for i, a in enumerate(ABSTRACTS[:3], start=2)]
    path.write_text("id,title,abstract\n" + "\n".join(rows) + "\n", encoding="utf-8")
    lib.ingest([path])
    assert {pid: pos for pid, (_, pos, _) in stored(lib).items()} == {"x2": 1, "x3": 2, "x4": 3}
    embedded = lib.embedder.encoded
    path.write_text("id,title,abstract\nx1,,too short\n" + "\n".join(rows) + "\n", encoding="utf-8")
    summary = lib.ingest([path])
    assert (summary.added, summary.updated, summary.removed, summary.unchanged, summary.moved) == (0, 0, 0, 3, 3)
    assert lib.embedder.encoded == embedded
    assert {pid: pos for pid, (_, pos, _) in stored(lib).items()} == {"x2": 2, "x3": 3, "x4": 4}
    assert lib.paper("x2").position == 2


def test_other_sources_are_untouched(lib, tmp_path):
    folder = tmp_path / "c"
    a = corpus_file(folder, "a.txt", ABSTRACTS[:2])
    b = corpus_file(folder, "b.txt", ABSTRACTS[2:])
    lib.ingest([a, b])
    lib.ingest([corpus_file(folder, "a.txt", ABSTRACTS[:1])])
    sources = sorted(s for s, _, _ in stored(lib).values())
    assert sources == ["a.txt", "b.txt", "b.txt"]


def test_bad_file_leaves_the_store_unchanged(lib, tmp_path):
    folder = tmp_path / "c"
    good = corpus_file(folder, "a.txt", ABSTRACTS)
    lib.ingest([good])
    before = stored(lib)
    corpus_file(folder, "a.txt", ABSTRACTS[:1])  # would remove three papers...
    bad = folder / "z.jsonl"
    bad.write_text(json.dumps({"abstract": ABSTRACTS[1]}) + "\n{broken\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"z\.jsonl:2: invalid JSON"):
        lib.ingest([folder])  # ...but the folder also holds a broken file
    assert stored(lib) == before


def test_interrupted_ingest_is_completed_by_the_next_run(lib, tmp_path, monkeypatch):
    f = corpus_file(tmp_path / "c", "a.txt", ABSTRACTS)
    calls = {"n": 0}
    real_upsert = Store.upsert

    def failing_upsert(self, ids, embeddings, metadatas):
        calls["n"] += 1
        # Write half of the first batch, then die as a killed process would.
        real_upsert(self, ids[: len(ids) // 2], embeddings[: len(ids) // 2], metadatas[: len(ids) // 2])
        raise KeyboardInterrupt

    monkeypatch.setattr(Store, "upsert", failing_upsert)
    with pytest.raises(KeyboardInterrupt):
        lib.ingest([f])
    monkeypatch.setattr(Store, "upsert", real_upsert)
    summary = lib.ingest([f])
    assert summary.unchanged + summary.added + summary.updated == 4
    chunks = list(lib.store.iter_chunks(with_text=False))
    assert len(chunks) == len({c.chunk_id for c in chunks})
    assert {c.paper_id for c in chunks} == set(stored(lib))
    assert all(n == c for (_, _, c), n in zip(stored(lib).values(), [
        next(ch.n_chunks for ch in chunks if ch.paper_id == pid) for pid in stored(lib)]))
    assert lib.ingest([f]).unchanged == 4


def test_duplicate_abstracts_are_stored_once(lib, tmp_path):
    folder = tmp_path / "c"
    summary = lib.ingest([corpus_file(folder, "a.txt", ABSTRACTS[:2]), corpus_file(folder, "b.txt", ABSTRACTS[1:3])])
    assert summary.added == 3
    assert summary.duplicates == ["b.txt #1 repeats a.txt #2"]


def test_store_built_with_another_model_is_refused(tmp_path):
    settings = make_settings(tmp_path)
    with Library(settings, embedder=HashEmbedder("model-a", 64)) as lib:
        lib.ingest([corpus_file(tmp_path / "c", "a.txt", ABSTRACTS)])
    with pytest.raises(ModelMismatchError, match="model-a.*model-b"):  # refused when the library opens
        Library(settings, embedder=HashEmbedder("model-b", 64))


def test_chroma_default_embedding_function_never_runs(lib, tmp_path, monkeypatch):
    from chromadb.utils.embedding_functions import DefaultEmbeddingFunction

    def refuse(*args, **kwargs):
        raise AssertionError("Chroma's default embedding function was called")

    monkeypatch.setattr(DefaultEmbeddingFunction, "__call__", refuse)
    lib.ingest([corpus_file(tmp_path / "c", "a.txt", ABSTRACTS)])
    assert lib.search("bit mask weights fine-tuning").hits
    assert lib.store._collection._embedding_function is None


def test_run_killed_before_recording_its_version_is_finished_by_the_next(lib, tmp_path, monkeypatch):
    """Keyword indexes in other processes rebuild when the version changes; a killed run must not hide its writes."""
    f = corpus_file(tmp_path / "c", "a.txt", ABSTRACTS)
    real_bump = Store.bump_version

    def die_at_the_end(self, writing=False):
        if not writing:
            raise KeyboardInterrupt
        return real_bump(self, writing=writing)

    monkeypatch.setattr(Store, "bump_version", die_at_the_end)
    with pytest.raises(KeyboardInterrupt):
        lib.ingest([f])
    monkeypatch.setattr(Store, "bump_version", real_bump)
    assert lib.store.write_in_progress()
    version = lib.store.content_version()
    summary = lib.ingest([f])
    assert summary.unchanged == 4 and lib.embedder.encoded
    assert lib.store.content_version() != version
    assert not lib.store.write_in_progress()
    unchanged_version = lib.store.content_version()
    lib.ingest([f])
    assert lib.store.content_version() == unchanged_version


# -- conference exports: updates in place, papers before their abstracts, stores from older versions ------


def _program(tmp_path, name="program.json", **change):
    from benchmarks import shapes

    papers = [dict(p, **change.get(p["id"], {})) for p in shapes.PAPERS]
    return shapes.write_json(tmp_path / "c" / name, shapes.program(papers))


def test_changed_decision_updates_metadata_in_place_without_embedding(lib, tmp_path):
    from benchmarks.shapes import PAPERS

    first = lib.ingest([_program(tmp_path)])
    assert (first.added, first.chunks_embedded > 0) == (4, True)
    ids_before = {c.chunk_id for c in lib.store.iter_chunks(with_text=False)}
    embedded = lib.embedder.encoded
    beta = PAPERS[0]["id"]
    summary = lib.ingest([_program(tmp_path, **{beta: {"type": "poster", "area": "Optimization"}})])
    assert (summary.added, summary.updated, summary.unchanged, summary.chunks_embedded) == (0, 1, 3, 0)
    assert lib.embedder.encoded == embedded, "a metadata change must not re-embed"
    assert {c.chunk_id for c in lib.store.iter_chunks(with_text=False)} == ids_before
    paper = lib.paper("101")
    assert (paper.presentation, paper.area) == ("poster", "Optimization")
    assert paper.abstract.startswith("Direct preference optimization")


def test_abstract_published_later_reembeds_only_that_paper(lib, tmp_path):
    from benchmarks import shapes

    folder = tmp_path / "c"
    program = shapes.write_json(folder / "program.json", shapes.program(with_abstracts=False))
    first = lib.ingest([program])
    assert first.added == 4
    assert lib.paper("101").abstract == "" and lib.paper("101").title.startswith("$\\beta$-DPO")
    hits = lib.search("Preference Optimization with a Dynamic beta").hits
    assert hits[0].paper_id == "101" and hits[0].quotes == ()  # found by its title, nothing quoted
    embedded = lib.embedder.encoded
    abstracts = shapes.write_json(folder / "abstracts.json", {"101": shapes.PAPERS[0]["abstract"]})
    summary = lib.ingest([program, abstracts])
    assert (summary.added, summary.updated, summary.unchanged, summary.removed) == (0, 1, 3, 0)
    chunks = summary.chunks_embedded
    assert chunks >= 1 and lib.embedder.encoded - embedded == chunks
    assert lib.paper("101").abstract == shapes.PAPERS[0]["abstract"]
    assert len(stored(lib)) == 4
    # The abstracts file alone, later: merged into the stored paper, nothing changes.
    again = lib.ingest([abstracts])
    assert (again.added, again.updated, again.chunks_embedded) == (0, 0, 0)
    assert lib.paper("101").source == "program.json"


def test_store_from_before_metadata_hashes_keeps_working(lib, tmp_path):
    """Chunks written by older versions (no embed/meta hash, authors as text) are read and upgraded in place."""
    import hashlib

    path = tmp_path / "c" / "r.jsonl"
    path.parent.mkdir()
    rec = {"id": "p1", "title": "Masks", "abstract": ABSTRACTS[0], "authors": ["Ada", "Bob"]}
    path.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    old_hash = hashlib.sha256("\x1f".join(["Masks", ABSTRACTS[0], "Ada, Bob", "", "", "Masks"]).encode()).hexdigest()[:16]
    meta = {"paper_id": "p1", "source": "r.jsonl", "position": 1, "label": "Masks", "title": "Masks",
            "authors": "Ada, Bob", "url": "", "venue": "", "links": "[]", "content_hash": old_hash,
            "abstract_chars": len(ABSTRACTS[0]), "chunk_index": 0, "n_chunks": 1, "start": 0, "end": len(ABSTRACTS[0])}
    vec = lib.embedder.encode(["Masks. " + ABSTRACTS[0]])
    lib.store._collection.upsert(ids=[f"p1:{old_hash[:10]}:0"], embeddings=vec, documents=[ABSTRACTS[0]],
                                 metadatas=[meta])
    lib.store.bump_version()
    paper = lib.paper("p1")
    assert paper.authors == ("Ada", "Bob") and paper.keywords == () and paper.area == ""
    embedded = lib.embedder.encoded
    summary = lib.ingest([path])
    assert (summary.added, summary.updated, summary.chunks_embedded, summary.snippets_added) == (0, 0, 0, 1)
    assert lib.embedder.encoded == embedded + 1, "its sentence vectors are computed once; its chunk is kept"
    [chunk] = lib.store.iter_chunks(with_text=False)
    assert chunk.chunk_id == f"p1:{old_hash[:10]}:0" and not chunk.legacy and chunk.meta_hash


def test_a_bad_export_next_to_a_good_one_writes_nothing(lib, tmp_path):
    from benchmarks import shapes

    good = shapes.write_json(tmp_path / "c" / "program.json", shapes.program())
    bad = shapes.write_json(tmp_path / "c" / "notes.json",
                            {"notes": [shapes.note_v2(shapes.PAPERS[0]), {"content": {}}, {"content": {}}]})
    with pytest.raises(InputError, match=r"notes\.json: 2 of 3 records failed, so the file is refused: "
                                         r"record 2: abstract is missing"):
        lib.ingest([good, bad])
    assert lib.store.count() == 0
    with pytest.raises(InputError, match=r"notes\.json: record 2: abstract is missing"):
        lib.ingest([good, shapes.write_json(bad, {"notes": [shapes.note_v2(shapes.PAPERS[0]), {"content": {}}]})],
                   strict=True)
    assert lib.store.count() == 0


# -- sentence vectors for snippets ---------------------------------------------------------------------


def sentence_spans(lib: Library) -> dict[str, list[tuple[int, int]]]:
    papers = {p.paper_id: p.content_hash for p in lib.papers()}
    return {pid: [(a, b) for a, b, _ in rows] for pid, rows in lib.store.snippets.vectors(papers).items()}


def test_every_sentence_gets_a_stored_vector_and_search_embeds_only_the_question_s_readings(lib, tmp_path,
                                                                                             monkeypatch):
    from paperbot.text import split_sentences

    lib.ingest([corpus_file(tmp_path / "c", "a.txt", ABSTRACTS)])
    expected = {p.paper_id: [(s.start, s.end) for s in split_sentences(p.abstract)] for p in lib.papers()}
    assert sentence_spans(lib) == expected
    encoded: list[str] = []
    encode = lib.embedder.encode
    monkeypatch.setattr(lib.embedder, "encode", lambda texts, batch_size=None: encoded.extend(texts) or encode(texts))
    question = "hierarchical physical alignment for video generation"
    hits = lib.search(question).hits
    assert hits and hits[0].quotes[0].text.startswith("We propose HiPhy")
    # the question, and the question-level check's readings of it: with one word left out, and once beside the
    # abstract of the paper it checks (one text); no abstract sentence is embedded alone
    assert encoded[0] == question and encoded.count(question) == 1
    beside = [text for text in encoded[1:] if text.startswith(question + " [SEP] ")]
    assert beside == [f"{question} [SEP] {hits[0].paper.abstract}"], encoded
    assert all(set(text.split()) < set(question.split()) for text in encoded[1:] if text not in beside), encoded


def test_sentence_vectors_follow_edits_and_deletions(lib, tmp_path):
    folder = tmp_path / "c"
    lib.ingest([corpus_file(folder, "a.txt", ABSTRACTS)])
    edited = [ABSTRACTS[0].replace("0.05%", "0.01%"), *ABSTRACTS[2:]]
    lib.ingest([corpus_file(folder, "a.txt", edited)])
    spans = sentence_spans(lib)
    assert set(spans) == {p.paper_id for p in lib.papers()} and len(spans) == 3
    assert lib.store.snippets.count() == 3, "no vectors of removed or replaced versions are left"


def test_store_without_sentence_vectors_is_served_then_backfilled_without_reembedding(lib, tmp_path):
    f = corpus_file(tmp_path / "c", "a.txt", ABSTRACTS)
    lib.ingest([f])
    lib.store.snippets.delete([p.content_hash for p in lib.papers()])  # a store from before they existed
    assert sentence_spans(lib) == {}
    assert lib.search("Bellman residual minimization").hits[0].quotes[0].text.startswith("We study Bellman")
    again = lib.ingest([f])
    assert (again.unchanged, again.chunks_embedded, again.snippets_added) == (4, 0, 4)
    assert len(sentence_spans(lib)) == 4
    assert lib.ingest([f]).snippets_added == 0


def test_sentence_vectors_of_the_earlier_one_row_per_sentence_layout_are_moved_without_the_model(lib, tmp_path):
    f = corpus_file(tmp_path / "c", "a.txt", ABSTRACTS)
    lib.ingest([f])
    papers = {p.paper_id: p.content_hash for p in lib.papers()}
    before = lib.store.snippets.vectors(papers)
    # Rewrite them as the earlier layout stored them: one row per sentence, its vector in the vector index.
    legacy = lib.store._client.create_collection(lib.settings.store.collection + "-sentences",
                                                 embedding_function=None, metadata={"hnsw:space": "cosine"})
    rows = [(pid, papers[pid], j, a, b, v) for pid, found in before.items() for j, (a, b, v) in enumerate(found)]
    legacy.add(ids=[f"{pid}:{h[:10]}:s{j}" for pid, h, j, *_ in rows], embeddings=[v.tolist() for *_, v in rows],
               metadatas=[{"paper_id": pid, "content_hash": h, "start": a, "end": b} for pid, h, _, a, b, _ in rows])
    lib.store.snippets.delete(list(papers.values()))
    encoded = lib.embedder.encoded
    again = lib.ingest([f])
    assert (again.unchanged, again.chunks_embedded, again.snippets_added) == (4, 0, 0)
    assert lib.embedder.encoded == encoded, "moving the vectors needs no model"
    after = lib.store.snippets.vectors(papers)
    assert {pid: [(a, b) for a, b, _ in r] for pid, r in after.items()} == \
        {pid: [(a, b) for a, b, _ in r] for pid, r in before.items()}
    assert all(np.allclose(v1, v2, atol=1e-3) for pid in before for (_, _, v1), (_, _, v2) in zip(before[pid], after[pid]))
    names = {getattr(c, "name", c) for c in lib.store._client.list_collections()}
    assert lib.settings.store.collection + "-sentences" not in names


def test_paper_withdrawn_after_ingest_is_removed_and_reported(lib, tmp_path):
    assert lib.ingest([_program(tmp_path)]).added == 4
    program = json.loads((tmp_path / "c" / "program.json").read_text())
    for entry in program["results"]:
        if entry["id"] == 102:
            entry["decision"] = "Withdrawn"
    (tmp_path / "c" / "program.json").write_text(json.dumps(program))
    summary = lib.ingest([tmp_path / "c" / "program.json"])
    assert (summary.removed, summary.unchanged, len(summary.not_accepted)) == (1, 3, 1)
    assert "1 withdrawn or rejected submission skipped" in summary.line()
    assert lib.paper("102") is None and lib.paper("101") is not None


def _raw_metadatas(lib: Library) -> list[dict]:
    return lib.store._collection.get(include=["metadatas"])["metadatas"]


def test_a_chunk_keeps_its_fields_and_text_as_one_record(lib, tmp_path):
    """Chroma indexes every metadata key of every row, and every document; a chunk stores three keys and no
    document, and its fields and text read back whole."""
    path = tmp_path / "c" / "r.jsonl"
    path.parent.mkdir()
    rec = {"id": "p1", "title": "Masks", "abstract": ABSTRACTS[0], "authors": ["Ada", "Bob"], "keywords": ["masks"],
           "area": "Deep Learning", "starttime": "2026-12-08T10:00:00-08:00", "room": "Hall C"}
    path.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    lib.ingest([path])
    [meta] = _raw_metadatas(lib)
    assert set(meta) == {"paper_id", "embed_hash", "record"} and meta["paper_id"] == "p1"
    assert lib.store._collection.get(include=["documents"])["documents"] == [None]
    paper = lib.paper("p1")
    assert paper.abstract == ABSTRACTS[0] and paper.title == "Masks"
    assert paper.authors == ("Ada", "Bob") and paper.keywords == ("masks",) and paper.area == "Deep Learning"
    assert [(s.start, s.room) for s in paper.slots] == [("2026-12-08T10:00:00-08:00", "Hall C")]


def test_a_store_in_the_one_key_per_field_layout_is_served_then_rewritten_as_records_without_embedding(lib, tmp_path):
    from benchmarks.store_writes import previous_layout
    from ingest.parse import parse_file
    from ingest.pipeline import paper_chunks

    path = tmp_path / "c" / "r.jsonl"
    path.parent.mkdir()
    recs = [{"id": f"p{i}", "title": f"Paper {i}", "abstract": a, "authors": ["Ada", "Bob"], "area": "Theory"}
            for i, a in enumerate(ABSTRACTS)]
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    papers = parse_file(path)
    rows = [(p, row) for p in papers for row in paper_chunks(p, lib.embedder)]
    texts = [f"{p.title}. {row.text}" for p, row in rows]
    lib.store._collection.upsert(  # its text as the Chroma document
        ids=[row.chunk_id for _, row in rows], embeddings=lib.embedder.encode(texts),
        documents=[row.text for _, row in rows],
        metadatas=[previous_layout(p, index=int(row.chunk_id.rsplit(":", 1)[1]),
                                    n_chunks=sum(q is p for q, _ in rows), start=row.start, end=row.end)
                   for p, row in rows])
    lib.store.bump_version()
    assert lib.paper("p2").authors == ("Ada", "Bob") and lib.paper("p2").area == "Theory"
    assert lib.paper("p2").abstract == ABSTRACTS[2]

    before = {p.paper_id: p for p in lib.papers()}
    embedded = lib.embedder.encoded
    recs[1]["area"] = "Reinforcement Learning"  # a metadata change beside the move to records
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    summary = lib.ingest([path])
    assert (summary.added, summary.updated, summary.unchanged, summary.chunks_embedded) == (0, 1, 3, 0)
    assert lib.embedder.encoded == embedded + len(ABSTRACTS), "only the sentence vectors, stored before them"
    metas = _raw_metadatas(lib)
    assert all(set(m) == {"paper_id", "embed_hash", "record"} for m in metas), "the per-field keys are removed"
    assert lib.paper("p1").area == "Reinforcement Learning" and lib.paper("p1").authors == ("Ada", "Bob")
    assert {pid: p for pid, p in before.items() if pid != "p1"} == {p.paper_id: p for p in lib.papers()
                                                                   if p.paper_id != "p1"}
    assert [c.text for c in lib.store.iter_chunks(with_text=False) if c.paper_id == "p1"] == [ABSTRACTS[1]]
    assert lib.ingest([path]).unchanged == len(ABSTRACTS) and not lib.store.write_in_progress()


def test_a_damaged_record_reads_as_empty_fields_and_the_next_ingest_writes_the_paper_again(lib, tmp_path):
    path = tmp_path / "c" / "r.jsonl"
    path.parent.mkdir()
    path.write_text(json.dumps({"id": "p1", "title": "Masks", "abstract": ABSTRACTS[0], "authors": ["Ada"]}) + "\n",
                    encoding="utf-8")
    lib.ingest([path])
    [cid] = lib.store._collection.get(include=[])["ids"]
    lib.store._collection.update(ids=[cid], metadatas=[{"record": "{not json"}])
    lib.store.bump_version()
    [chunk] = lib.store.iter_chunks(with_text=False)
    assert chunk.paper_id == "p1" and chunk.fields.authors == () and chunk.meta_hash == ""
    summary = lib.ingest([path])
    assert (summary.updated, summary.chunks_embedded) == (1, 1), "its chunk no longer says it is complete"
    [meta] = _raw_metadatas(lib)
    assert json.loads(meta["record"])["authors"] == ["Ada"]
    assert lib.paper("p1").authors == ("Ada",) and lib.paper("p1").title == "Masks"


def test_a_store_of_a_later_layout_is_refused_with_what_to_do(tmp_path):
    from paperbot.errors import StoreError

    settings = make_settings(tmp_path)
    with Library(settings, embedder=HashEmbedder()) as lib:
        lib.ingest([corpus_file(tmp_path / "c", "a.txt", ABSTRACTS)])
        assert lib.store._fresh_metadata()["schema_version"] == 2
        meta = lib.store._fresh_metadata()
        meta.pop("hnsw:space", None)
        lib.store._collection.modify(metadata={**meta, "schema_version": 3})
    with pytest.raises(StoreError, match="newer paperbot.*layout 3.*up to 2"):
        Library(settings, embedder=HashEmbedder())


def _jsonl(path: Path, *records: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_a_file_of_a_stored_name_holding_other_papers_is_refused_and_nothing_is_lost(lib, tmp_path):
    lib.ingest([_jsonl(tmp_path / "y2024" / "papers.jsonl", {"id": "a24", "title": "Masks", "abstract": ABSTRACTS[0]},
                       {"id": "b24", "title": "Bellman", "abstract": ABSTRACTS[1]})])
    other = _jsonl(tmp_path / "y2025" / "papers.jsonl", {"id": "a25", "title": "HiPhy", "abstract": ABSTRACTS[2]})
    with pytest.raises(InputError) as err:
        lib.ingest([other])
    assert str(other) in str(err.value) and "2 of the 2 papers" in str(err.value) and "--replace" in str(err.value)
    assert stored(lib).keys() == {"a24", "b24"}
    summary = lib.ingest([other], replace=True)
    assert (summary.added, summary.updated, summary.removed) == (1, 0, 2)
    assert stored(lib).keys() == {"a25"}


def test_a_new_version_of_a_file_keeping_most_papers_is_not_refused(lib, tmp_path):
    records = [{"id": f"p{i}", "title": t, "abstract": a} for i, (t, a) in
               enumerate(zip(["Masks", "Bellman", "HiPhy", "Alphas"], ABSTRACTS))]
    lib.ingest([_jsonl(tmp_path / "old" / "list.jsonl", *records)])
    summary = lib.ingest([_jsonl(tmp_path / "new" / "list.jsonl", *records[:2], records[3])])  # one removed
    assert (summary.removed, summary.unchanged) == (1, 3)
    assert stored(lib).keys() == {"p0", "p1", "p3"}


def test_editing_the_only_untitled_abstract_of_a_file_is_an_update_not_another_file(lib, tmp_path):
    folder = tmp_path / "c"
    lib.ingest([corpus_file(folder, "one.txt", ABSTRACTS[:1])])
    summary = lib.ingest([corpus_file(folder, "one.txt", [ABSTRACTS[0].replace("0.05%", "0.07%")])])
    assert (summary.added, summary.updated, summary.removed) == (0, 1, 0)


def test_a_paper_with_an_id_stored_from_another_file_is_skipped_and_named(lib, tmp_path):
    lib.ingest([_jsonl(tmp_path / "good.jsonl", {"id": "1", "title": "Masks", "abstract": ABSTRACTS[0]})])
    other = _jsonl(tmp_path / "other.jsonl", {"id": "1", "title": "HiPhy", "abstract": ABSTRACTS[2]},
                   {"id": "2", "title": "Alphas", "abstract": ABSTRACTS[3]})
    summary = lib.ingest([other])
    assert (summary.added, summary.updated) == (1, 0)
    assert lib.paper("1").label == "Masks" and lib.paper("2").label == "Alphas"
    assert summary.clashes == [
        "other.jsonl #1 skipped: its id '1' is stored from good.jsonl #1 with another title or abstract"]
    assert summary.clashes[0] in summary.notes() and "1 skipped: its id is stored from another file" in summary.line()
    assert lib.ingest([other], replace=True).updated == 1 and lib.paper("1").label == "HiPhy"


def test_a_paper_moved_to_another_file_with_an_edit_is_updated_when_both_files_are_read(lib, tmp_path):
    lib.ingest([_jsonl(tmp_path / "a.jsonl", {"id": "1", "title": "Masks", "abstract": ABSTRACTS[0]},
                       {"id": "2", "title": "Bellman", "abstract": ABSTRACTS[1]})])
    a = _jsonl(tmp_path / "a.jsonl", {"id": "2", "title": "Bellman", "abstract": ABSTRACTS[1]})
    b = _jsonl(tmp_path / "b.jsonl", {"id": "1", "title": "Bit masks", "abstract": ABSTRACTS[0] + " It is fast."})
    summary = lib.ingest([a, b])
    assert not summary.clashes and summary.updated == 1
    assert lib.paper("1").source == "b.jsonl" and lib.paper("1").label == "Bit masks"


def test_a_paper_moved_to_another_file_unchanged_is_moved(lib, tmp_path):
    lib.ingest([_jsonl(tmp_path / "a.jsonl", {"id": "1", "title": "Masks", "abstract": ABSTRACTS[0]},
                       {"id": "2", "title": "Bellman", "abstract": ABSTRACTS[1]})])
    summary = lib.ingest([_jsonl(tmp_path / "b.jsonl", {"id": "1", "title": "Masks", "abstract": ABSTRACTS[0]})])
    assert not summary.clashes and summary.moved == 1 and lib.paper("1").source == "b.jsonl"
