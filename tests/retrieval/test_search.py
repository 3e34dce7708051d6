"""Retrieval behaviour on the bundled corpus with the real model and real Chroma."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from retrieval.answer import extractive_answer
from retrieval.keyword import tokenize

QUESTIONS = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "bundled_questions.jsonl"
OFFTOPIC = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "offtopic_questions.txt"


def where(hit) -> tuple[str, int]:
    return hit.paper.source, hit.paper.position


def test_answerable_questions_find_their_paper(library):
    cases = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line]
    top1 = top3 = 0
    misses = []
    for case in cases:
        result = library.search(case["question"], k=3)
        found = [where(h) for h in result.hits]
        want = (case["source"], case["position"])
        top1 += found[0] == want
        top3 += want in found
        if want not in found:
            misses.append(case["question"])
        assert not result.abstained, f"abstained on an answerable question: {case['question']!r}"
    assert top3 / len(cases) >= 0.95, misses
    assert top1 / len(cases) >= 0.85


@pytest.mark.parametrize(
    "query, label",
    [
        ("BMT", "BMT"),
        ("87.43%", "IFDecorator"),
        ("99.94%", "AS2"),
        ("NV-CoT", "NV-CoT"),
        ("AlphaPareto", "AlphaPareto"),
    ],
)
def test_acronyms_and_exact_numbers_rank_first(library, query, label):
    result = library.search(query, k=5)
    assert result.hits[0].label == label
    assert not result.abstained


def test_off_topic_questions_abstain_but_list_closest_papers(library):
    questions = [q for q in OFFTOPIC.read_text().splitlines() if q.strip()]
    abstained = [q for q in questions if library.search(q).abstained]
    assert len(abstained) >= 0.9 * len(questions), set(questions) - set(abstained)
    result = library.search("what is a good recipe for sourdough bread?")
    assert result.abstained and result.hits, "abstention still lists the closest papers"


def test_hits_are_distinct_papers_with_verbatim_snippets(library):
    result = library.search("reinforcement learning for large language model reasoning", k=10)
    ids = [h.paper_id for h in result.hits]
    assert len(ids) == 10 == len(set(ids))
    scores = [h.score for h in result.hits]
    assert scores == sorted(scores, reverse=True)
    for h in result.hits:
        abstract = library.paper(h.paper_id).abstract
        for q in h.quotes:
            assert abstract[q.start:q.end] == q.text
        assert all(part in abstract for part in h.snippet.split(" … "))


def test_snippet_is_the_sentence_that_answers(library):
    hit = library.search("how do people fine-tune by masking weights?").hits[0]
    assert hit.label == "BMT"
    best = hit.quotes[0].text.lower()
    assert "mask" in best or "zeroing" in best, best


def test_sentence_cache_stays_bounded_and_quotes_do_not_depend_on_it(library, monkeypatch):
    import retrieval.search as search

    questions = ["how do people fine-tune by masking weights?", "graph neural networks",
                 "reinforcement learning for large language model reasoning"]
    retriever = library.retriever
    first = [[(h.paper_id, h.quotes) for h in library.search(q, k=5).hits] for q in questions]
    monkeypatch.setattr(search, "SENTENCE_CACHE_PAPERS", 3)
    retriever._sentence_cache.clear()
    again = [[(h.paper_id, h.quotes) for h in library.search(q, k=5).hits] for q in questions]
    assert again == first
    assert len(retriever._sentence_cache) == 3


def test_stored_abstracts_are_reassembled_exactly(library, corpus_dir):
    from ingest.parse import discover, parse_file

    papers = [p for f in discover([corpus_dir]) for p in parse_file(f)]
    for p in papers:
        record = library.paper(p.paper_id)
        assert record.abstract == p.abstract
        assert (record.source, record.position, record.label) == (p.source, p.position, p.label)


def test_extractive_answer_cites_verbatim_sentences(library):
    answer = extractive_answer(library.search("how do people fine-tune by masking weights?"))
    assert not answer.abstained and answer.citations
    assert answer.citations[0].label == "BMT"
    lines = answer.text.split("\n")
    assert len(lines) == len(answer.citations)
    for line, c in zip(lines, answer.citations):
        assert line.endswith(f"[{c.n}]")
        quoted = line[: -len(f" [{c.n}]")]
        assert quoted == c.quote
        for sentence in quoted.split(" … "):  # two sentences apart in the abstract are joined by " … "
            assert sentence in library.paper(c.paper_id).abstract


def test_empty_question_abstains_without_searching(library):
    result = library.search("   \n ")
    assert result.abstained and result.hits == []


def test_keyword_tokens_keep_compounds_numbers_and_cjk():
    toks = tokenize("NV-CoT reaches 87.43% on 论文")
    assert "nv-cot" in toks and "nv" in toks and "cot" in toks
    assert "87.43" in toks
    assert "论" in toks and "文" in toks


def test_keyword_index_knows_which_chunks_hold_a_term():
    from retrieval.keyword import KeywordIndex

    idx = KeywordIndex.build(["a:0", "b:0", "c:0"], ["bit masks on weights", "dynamic programming", "masks again"])
    assert sorted(idx.chunks_with("mask").tolist()) == [0, 2]
    assert idx.chunks_with("programming").tolist() == []  # stemmed: "program"
    assert idx.chunks_with("program").tolist() == [1]
    assert idx.chunks_with("absent").tolist() == []


def test_keyword_index_scores_as_bm25s_does():
    """The compact index gives the scores of bm25s's Lucene BM25 built over the same tokens."""
    import bm25s

    from retrieval.keyword import BM25_B, BM25_K1, KeywordIndex

    texts = ["Bit masks on weights: masking weights fine-tunes a model.", "", "dynamic programming on graphs",
             "Masks again, and again masks", "graph neural networks for molecules", "weights weights weights",
             "NV-CoT reaches 87.43% on 论文"]
    ids = [f"p{i}:0" for i in range(len(texts))]
    idx = KeywordIndex.build(ids, texts)
    vocab: dict[str, int] = {}
    docs = [[vocab.setdefault(t, len(vocab)) for t in tokenize(x) or ["\x00empty"]] for x in texts]
    reference = bm25s.BM25(k1=BM25_K1, b=BM25_B)
    reference.index((docs, vocab), show_progress=False)
    for query in ["masking weights", "graph", "masks masks weights", "87.43 nv-cot", "论文", "absent words"]:
        tokens = [t for t in tokenize(query) if t in vocab]
        expected = reference.get_scores(tokens) if tokens else np.zeros(len(texts))
        np.testing.assert_allclose(idx.scores(tokenize(query)), expected, rtol=1e-5, atol=1e-6, err_msg=query)
    assert idx.df("weight") == 2 and idx.df("absent") == 0
    assert idx.idf("molecul") > idx.idf("weight") > 0  # rarer terms weigh more


def test_keyword_index_of_nothing_scores_nothing():
    from retrieval.keyword import KeywordIndex

    idx = KeywordIndex.build([], [])
    assert idx.scores(["mask"]).shape == (0,) and idx.df("mask") == 0 and idx.chunks_with("mask").size == 0
