"""The field's general terms said by their instances (retrieval/instances.py): a paper naming "Llama 3.1" and
"OLMo" speaks of LLMs, in the terms it holds, its sentences and its names."""

from __future__ import annotations

import pytest

from retrieval.instances import holding, load, said_by, says_by_name
from retrieval.keyword import tokenize

TERMS = load("# comment\nLLM|large language model\tLlama, OLMo\nGNN|graph neural network\tGCN\n")


def test_the_shipped_table_reads_and_a_bad_line_is_named():
    shipped = load()
    assert any("LLM" in t.forms and "Llama" in t.names for t in shipped)
    with pytest.raises(ValueError, match=r"instances.tsv line 2: expected"):
        load("LLM\tLlama\nGNN graph neural network GCN\n")
    with pytest.raises(ValueError, match="line 1"):
        load("LLM|large language model\t , \n")


def test_a_general_term_is_held_by_its_names_and_by_its_other_forms():
    said = said_by("which paper studies sycophancy in LLMs?", TERMS)
    assert set(said) == {"llms"}  # the question's own token, as the index stems it
    assert holding(set(tokenize("We evaluate OLMo 3 7B Think")), said) >= {"llms"}
    assert "llms" in holding(set(tokenize("post-training of large language models")), said)
    assert "llms" not in holding(set(tokenize("a graph convolutional network (GCN) for molecules")), said)
    # the words of "language model" each: a paper about Llama speaks of language
    phrase = said_by("sycophancy in language models", load("LLM|language model\tLlama\n"))
    assert {"languag", "model"} <= holding(set(tokenize("Llama 3.1 8B Instruct")), phrase)
    assert said_by("sycophancy in dialogue", TERMS) == {}


def test_a_question_name_is_said_by_an_instance_only_of_its_own_term():
    assert says_by_name("LLMs", "Llama 3.1 8B Instruct and Tulu 3", TERMS)
    assert not says_by_name("LLMs", "a GCN over citation graphs", TERMS)
    assert says_by_name("GNN", "a GCN over citation graphs", TERMS)
    assert not says_by_name("Mamba", "Llama 3.1 8B Instruct", TERMS)


def test_a_question_about_llms_cites_the_paper_that_names_its_llms(library):
    # the sycophancy paper names OLMo, Llama and Tulu and never writes "LLM" or "language model": that one missing
    # word (the question's second rarest) made all three abstain though the paper ranks first
    paper = next(p for p in library.papers() if "sycophancy" in p.abstract.lower())
    assert "llm" not in paper.abstract.lower() and "language model" not in paper.abstract.lower()
    for question in ("LLM sycophancy", "which paper studies sycophancy in LLMs?", "sycophancy in language models"):
        result = library.search(question)
        assert not result.abstained, question
        assert [h.paper.paper_id for h in result.hits if h.relevant][:1] == [paper.paper_id], question
    assert library.search("sycophancy in graph neural networks").abstained
