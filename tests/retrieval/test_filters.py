"""Metadata filters: matching rules, and restriction of the candidates before ranking (real Chroma)."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks import shapes
from paperbot.records import Paper
from retrieval.filters import FilterIndex, Filters, choices, facets, fold, nearest
from retrieval.library import Library
from retrieval.search import BROAD_FILTER
from tests.conftest import make_settings
from tests.fakes import HashEmbedder


def paper(**kw) -> Paper:
    base = {"paper_id": "x", "source": "s.json", "position": 1, "abstract": "", "label": "L"}
    return Paper(**{**base, **kw})


ROD = paper(authors=("Emanuele Rodolà", "Zoë Müller"), area="Deep Learning", subarea="Alignment",
            presentation="oral", track="Datasets and Benchmarks", keywords=("Preference optimization",))


@pytest.mark.parametrize(
    "filters, expected",
    [
        (Filters(author="Rodola"), True),
        (Filters(author="rodolà"), True),
        (Filters(author="emanuele RODOLA"), True),
        (Filters(author="zoe muller"), True),
        (Filters(author="Rod"), False),  # whole words only
        (Filters(author="Rodolfo"), False),
        (Filters(area="deep learning"), True),
        (Filters(area="alignment"), True),
        (Filters(area="Deep Learning->Alignment"), True),
        (Filters(area="theory"), False),
        (Filters(type="oral"), True),
        (Filters(type="Orals"), True),
        (Filters(type="poster"), False),
        (Filters(track="datasets"), True),
        (Filters(track="main"), False),
        (Filters(keyword="preference optimization"), True),
        (Filters(keyword="pruning"), False),
        (Filters(author="Rodola", type="oral"), True),
        (Filters(author="Rodola", type="poster"), False),
    ],
)
def test_matching_ignores_case_and_accents_on_whole_words(filters, expected):
    assert filters.matches(ROD) is expected
    others = [paper(paper_id="p2", authors=("Wei Zhang",), area="Theory", presentation="poster", track="Main"), ROD,
              paper(paper_id="p3")]
    assert list(FilterIndex(others).mask(filters)) == [filters.matches(p) for p in others]  # one rule, two paths


NAMES = ("Søren Kierkegaard", "Łukasz Kaiser", "Jürgen Müller", "Đorđe Nikolić", "Æsa Straße", "陈伟")


@pytest.mark.parametrize("typed, found", [
    ("Soren", "Søren Kierkegaard"), ("soren kierkegaard", "Søren Kierkegaard"), ("Søren", "Søren Kierkegaard"),
    ("Lukasz", "Łukasz Kaiser"), ("Muller", "Jürgen Müller"), ("Mueller", "Jürgen Müller"),
    ("Müller", "Jürgen Müller"), ("Juergen Mueller", "Jürgen Müller"), ("Dorde Nikolic", "Đorđe Nikolić"),
    ("aesa strasse", "Æsa Straße"), ("陈伟", "陈伟"), ("Kierk", None), ("Muell", None), ("Chen", None),
])
def test_author_names_match_as_users_type_them_in_ascii(typed, found):
    papers = [Paper(paper_id=str(i), source="s", position=i, abstract="", label=n, authors=(n,))
              for i, n in enumerate(NAMES)]
    index = FilterIndex(papers)
    direct = [p.authors[0] for p in papers if Filters(author=typed).matches(p)]
    indexed = [papers[i].authors[0] for i in np.flatnonzero(index.mask(Filters(author=typed)))]
    assert direct == indexed == ([found] if found else [])


def test_autocomplete_offers_transliterated_names():
    counts = {"Jürgen Müller": 2, "Søren Kierkegaard": 1, "Ana Silva": 3}
    assert choices(counts, "muel") == ["Jürgen Müller"]
    assert choices(counts, "sor") == ["Søren Kierkegaard"]


def test_fold_nearest_and_choices():
    assert fold("  Émilie   DURAND ") == "emilie durand"
    assert nearest("Rodolfo", ["Emanuele Rodolà", "Wei Zhang", "Ana Lima"])[0] == "Emanuele Rodolà"
    counts = facets([ROD, paper(authors=("Wei Zhang",), area="Applications")])
    assert counts["area"]["Deep Learning"] == 1 and counts["type"]["oral"] == 1
    assert choices(counts["author"], "rodo") == ["Emanuele Rodolà"]
    assert choices(counts["author"], "mull") == ["Zoë Müller"]
    assert not Filters() and Filters(type=" oral ").type == "oral"


@pytest.fixture
def lib(tmp_path):
    with Library(make_settings(tmp_path), embedder=HashEmbedder()) as lib:
        yield lib


def test_filter_restricts_candidates_before_ranking_not_the_top_k(lib, tmp_path):
    """150 posters match the query far better than the one oral; a top-k filter would find no oral."""
    records = [{"id": f"m{i:03d}", "title": f"Masked weights {i}", "type": "poster", "authors": ["Wei Zhang"],
                "abstract": f"Sparse binary masks over weights match full fine-tuning of masks, study {i}."}
               for i in range(150)]
    records.append({"id": "oral1", "title": "Ocean currents", "type": "oral", "authors": ["Emanuele Rodolà"],
                    "abstract": "We model ocean currents with neural operators; one ablation uses masks."})
    lib.ingest([shapes.write_json(tmp_path / "c" / "flat.json", records)])
    unfiltered = lib.retriever.rank("sparse binary masks over weights", depth=100)
    assert "oral1" not in [r.paper_id for r in unfiltered]
    result = lib.search("sparse binary masks over weights", k=5, filters=Filters(type="oral"))
    assert [h.paper_id for h in result.hits] == ["oral1"]
    assert result.to_json()["filters"] == {"type": "oral"}
    by_author = lib.search("masks", k=5, filters=Filters(author="rodola"))
    assert [h.paper_id for h in by_author.hits] == ["oral1"]
    posters = lib.search("ocean currents neural operators", k=3, filters=Filters(type="poster"))
    assert len(posters.hits) == 3 and all(h.paper.presentation == "poster" for h in posters.hits)
    # Filtered dense scores are the exact best-chunk similarities of the stored vectors.
    qvec = lib.embedder.encode(["sparse binary masks over weights"])[0]
    view = lib.retriever.view()
    stored = lib.store.get_embeddings(view.chunk_ids)
    exact = {}
    for cid, vec in stored.items():
        pid = cid.rsplit(":", 2)[0]
        exact[pid] = max(exact.get(pid, -1.0), float(vec @ qvec))
    # A narrow filter scores every allowed chunk from the float16 copy.
    narrow = lib.retriever.rank("sparse binary masks over weights", depth=200, query_vector=qvec,
                                allowed=view.mask(Filters(author="Rodolà")))
    assert [r.paper_id for r in narrow] == ["oral1"] and abs(narrow[0].dense - exact["oral1"]) < 2e-3
    # A broad one (150 of 151 papers) keeps the vector index's nearest chunks that pass (the copy only when
    # the index returned too few of them).
    ranked = lib.retriever.rank("sparse binary masks over weights", depth=200, query_vector=qvec,
                                allowed=view.mask(Filters(author="Wei Zhang")))
    assert len(ranked) == 150 and "oral1" not in {r.paper_id for r in ranked}
    assert all(abs(r.dense - exact[r.paper_id]) < 2e-3 for r in ranked)


def test_empty_filtered_set_says_so_and_suggests_nearest_values(lib, tmp_path):
    lib.ingest([shapes.write_json(tmp_path / "c" / "program.json", shapes.program())])
    result = lib.search("preference optimization", filters=Filters(author="Rodolfo"))
    assert result.hits == [] and result.abstained
    assert "No paper matches author “Rodolfo”." in result.notice
    assert "Emanuele Rodolà" in result.notice
    both = lib.search("preference optimization", filters=Filters(author="Rodola", type="poster"))
    assert both.hits == [] and "no paper matches them all" in both.notice
    ok = lib.search("preference optimization", filters=Filters(author="Rodola", area="deep learning"))
    assert [h.paper_id for h in ok.hits] == ["101"]


def test_browse_lists_an_authors_papers_orals_first(lib, tmp_path):
    lib.ingest([shapes.write_json(tmp_path / "c" / "program.json", shapes.program())])
    assert [p.paper_id for p in lib.browse(Filters(author="wei zhang"))] == ["102", "104"]
    assert [p.paper_id for p in lib.browse(Filters(area="Deep Learning"))] == ["101"]
    stats = lib.stats()
    assert stats.types == {"poster": 2, "oral": 1, "spotlight": 1}
    assert stats.areas["Applications"] == 1


def test_exact_scores_for_missed_papers_agree_from_the_store_and_from_the_copy(lib, tmp_path):
    """Papers the vector index did not return are scored exactly: from Chroma, or from the float16 copy once read."""
    records = [{"id": f"p{i:03d}", "title": f"Paper {i}", "abstract": f"Study {i} of masks, operators and currents."}
               for i in range(40)]
    lib.ingest([shapes.write_json(tmp_path / "c" / "flat.json", records)])
    retriever = lib.retriever
    view = retriever.view()
    qvec = lib.embedder.encode(["masks over operators"])[0]
    papers = np.arange(0, 40, 3)
    rows = np.flatnonzero(np.isin(view.chunk_paper_idx, papers))
    assert view.read_vectors_of(rows) is None
    from_store = retriever._dense_for(view, papers, qvec)
    assert view.vectors_read == 0  # scoring missed papers keeps nothing
    view.vectors_of(rows[: len(rows) // 2], lib.store)
    assert view.read_vectors_of(rows) is None  # half read: still from the store
    view.vectors_of(rows, lib.store)
    assert view.vectors_read == len(rows)  # the other half read, nothing twice
    from_copy = retriever._dense_for(view, papers, qvec)
    np.testing.assert_allclose(from_copy, from_store, atol=2e-3)
    assert (from_store > -1).all()


def test_a_filter_reads_only_its_own_chunks_vectors(lib, tmp_path):
    """Exact filtered scores come from the vectors of the allowed chunks, read once; no other chunk is kept."""
    program = shapes.program()
    lib.ingest([shapes.write_json(tmp_path / "c" / "program.json", program)])
    retriever = lib.retriever
    view = retriever.view()
    oral = view.mask(Filters(type="oral"))
    rows = np.flatnonzero(oral[view.chunk_paper_idx])
    assert 0 < oral.sum() < len(view.papers) * BROAD_FILTER
    hits = lib.search("operators", filters=Filters(type="oral")).hits
    assert {h.paper.presentation for h in hits} <= {"oral"}
    assert view.vectors_read == len(rows)
    stored = lib.store.get_embeddings([view.chunk_ids[k] for k in rows])
    np.testing.assert_allclose(view.vectors_of(rows, lib.store).astype(np.float32),
                               np.stack([stored[view.chunk_ids[k]] for k in rows]), atol=2e-3)
    lib.search("operators", filters=Filters(type="oral"))
    assert view.vectors_read == len(rows)  # the second search reads nothing more
