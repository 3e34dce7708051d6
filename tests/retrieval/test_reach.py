"""A server's library is seen by its server only: every retrieval call restricts its candidates by `Reach`."""

from __future__ import annotations


import pytest

from paperbot.errors import InputError
from paperbot.records import Reach
from retrieval.filters import Filters
from retrieval.library import Library
from retrieval.server_library import Upload, UploadError, library_prefix, read_upload, shown_name
from tests.conftest import hashed_library, jsonl

A, B = "111111111111111111", "222222222222222222"
LIMITS = {"max_bytes": 1 << 20, "max_papers": 100}


@pytest.fixture
def shared(tmp_path):
    with hashed_library(tmp_path, [
            {"id": f"p{i}", "title": f"Graph paper {i}", "authors": ["Ada Lovelace"],
             "abstract": f"Graph neural networks for molecules, study {i}. We report results on benchmark {i}."}
            for i in range(5)]) as lib:
        yield lib


def add(lib: Library, library: str, records: list[dict], name: str = "lab.jsonl"):
    return lib.add_upload(Upload(library, name, jsonl(records)), **LIMITS)


def test_every_call_sees_the_program_and_its_own_library_only(shared):
    assert shared.retriever.view().reach_mask(Reach.server(B)) is None  # no library stored: no mask at all
    add(shared, A, [{"id": "x", "title": "Graph neural networks for lattice robots", "authors": ["Ada Lovelace"],
                     "abstract": "Graph neural networks steer lattice robots that fold molecules into origami."}])
    mine, theirs = Reach.server(A), Reach.server(B)
    lab_id = library_prefix(A) + "x"
    query = "graph neural networks lattice robots origami"
    assert shared.search(query, 10, reach=mine).hits[0].paper_id == lab_id
    assert lab_id not in {h.paper_id for h in shared.search(query, 10, reach=theirs).hits}
    assert lab_id in {h.paper_id for h in shared.search(query, 10).hits}  # the operator sees everything
    assert shared.paper(lab_id, theirs) is None and shared.paper(lab_id, mine) is not None
    assert shared.similar(lab_id, 5, reach=theirs) is None
    assert lab_id not in {s.paper.paper_id for s in shared.similar("p0", 5, reach=theirs) or []}
    assert lab_id in {s.paper.paper_id for s in shared.similar("p0", 5, reach=mine) or []}
    assert lab_id not in {s.paper.paper_id for s in shared.related(query, 5, reach=theirs)}
    by_ada = Filters(author="Ada Lovelace")
    assert len(shared.browse(by_ada, theirs)) == 5 and len(shared.browse(by_ada, mine)) == 6
    assert lab_id not in {h.paper_id for h in shared.search(query, 10, by_ada, reach=theirs).hits}
    assert shared.seen_from(theirs).paper(lab_id) is None
    assert "Ada Lovelace" in shared.facets(theirs)["author"]


def test_same_ids_in_two_servers_and_the_program_stay_three_papers(shared):
    record = {"id": "p0", "title": "Our own graph paper", "abstract": "A lab's own study of graph neural networks."}
    add(shared, A, [record])
    add(shared, B, [record])
    assert shared.paper("p0").title == "Graph paper 0"
    assert {shared.paper(library_prefix(x) + "p0").library for x in (A, B)} == {A, B}
    assert shared.uploads(A) == {"lab.jsonl": 1}
    assert shared.remove_upload(A, "lab.jsonl") == 1
    assert shared.paper(library_prefix(A) + "p0") is None and shared.paper(library_prefix(B) + "p0") is not None


def test_an_upload_is_refused_whole_before_anything_is_written(shared):
    before = shared.store.content_version()
    with pytest.raises(UploadError, match="more than this server's limit of 2"):
        shared.add_upload(Upload(A, "many.jsonl", jsonl([{"abstract": f"Abstract number {i} " * 5} for i in range(3)])),
                          max_bytes=1 << 20, max_papers=2)
    with pytest.raises(UploadError, match="larger than this server's 1 KB limit"):
        shared.add_upload(Upload(A, "big.jsonl", b" " * 4096), max_bytes=1024, max_papers=10)
    assert shared.store.content_version() == before


def test_an_upload_name_gives_a_name_and_a_suffix_never_a_path():
    assert shown_name("../../etc/passwd.json") == "passwd.json"
    assert shown_name("C:\\Users\\me\\My Papers (v2).csv") == "My Papers _v2_.csv"
    assert shown_name("évaluation.jsonl") == "évaluation.jsonl"
    for bad in ("paper.exe", "noext", ".json", "../"):
        with pytest.raises(InputError):
            shown_name(bad)
    loaded = read_upload(Upload(A, "x/../lab.jsonl", jsonl([{"id": "a b", "abstract": "An abstract " * 5}])),
                         **LIMITS)
    [paper] = loaded.papers
    assert paper.source == library_prefix(A) + "lab.jsonl" and paper.paper_id == library_prefix(A) + "a-b"


def test_a_typo_is_mended_only_into_words_the_asker_s_reach_holds(shared):
    add(shared, A, [{"id": "z", "title": "Zorbification of molecules",
                     "abstract": "Zorbification folds graph molecules into lattices."}])
    typed = "zorbificatoin of graph molecules"
    assert shared.search(typed, 5, reach=Reach.server(A)).query == "zorbification of graph molecules"
    assert shared.search(typed, 5, reach=Reach.server(B)).query == typed  # the word is only in A's library
    assert shared.search(typed, 5).query == "zorbification of graph molecules"  # the operator sees everything


def test_an_abstention_names_the_words_no_paper_it_may_see_says(shared):
    add(shared, A, [{"id": "b", "title": "Bathymetry of lattices",
                     "abstract": "Bathymetry maps the depth of lattice robots folding molecules."}])
    question = "bathymetry from sonar for coral reefs"
    theirs = shared.search(question, 5, reach=Reach.server(B))
    assert theirs.abstained and theirs.unsaid == ("bathymetry", "sonar", "coral")
    mine = shared.search(question, 5, reach=Reach.server(A))  # A's own paper on bathymetry answers it
    assert not mine.abstained and mine.unsaid == ()
    # a word the papers say in another form is said ("molecule" where they say "molecules")
    other = shared.search("molecule sonar for coral reefs", 5, reach=Reach.server(B))
    assert other.abstained and other.unsaid == ("sonar", "coral", "reefs")


def test_a_paper_named_in_a_question_is_cited_only_where_its_library_is_seen(shared):
    add(shared, A, [{"id": "z", "title": "ZorbNet: lattices for molecules",
                     "abstract": "ZorbNet folds graph molecules into lattices with a learned kernel."}])
    mine = shared.search("what is ZorbNet?", 5, reach=Reach.server(A))
    assert [h.paper.title for h in mine.hits if h.relevant] == ["ZorbNet: lattices for molecules"]
    theirs = shared.search("what is ZorbNet?", 5, reach=Reach.server(B))
    assert all("ZorbNet" not in h.paper.title for h in theirs.hits)


def test_a_name_another_paper_says_names_no_paper(shared):
    add(shared, A, [{"id": "z", "title": "ZorbNet: lattices for molecules",
                     "abstract": "ZorbNet folds graph molecules into lattices with a learned kernel."},
                    {"id": "y", "title": "Kernels for lattices",
                     "abstract": "We compare our kernels with ZorbNet on folded graph molecules."}])
    view = shared.retriever.view()
    assert view.called("what is ZorbNet?") == []  # the second abstract says it too: which paper is meant is open
