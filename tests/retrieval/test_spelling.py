"""Typos in a question are mended against the library's words before it is searched (retrieval/spelling.py)."""

from __future__ import annotations

import json
import re

import pytest

from benchmarks.common import DATA
from benchmarks.typo_bench import misspelt
from retrieval.answer import extractive_answer
from retrieval.keyword import KeywordIndex
from retrieval.spelling import mend, slips, typos

TEXTS = [
    "Discriminators trained with flow matching give a reward: the discriminator's logit guides the flow.",
    "Flow matching models learn a velocity field; matching the flow of probability mass.",
    "Support vector machines and machine learning baselines.",
    "Masking weights of a pretrained model fine-tunes it; we mask fewer than 0.05% of them.",
    "The reversal curse: models trained on 'A is B' fail on 'B is A'. Reversal training helps.",
    "Our analysis reveals that attention reveals structure.",
    "The vec operator stacks columns; epsilon-greedy exploration.",
]


@pytest.fixture(scope="module")
def small():
    index = KeywordIndex.build([str(i) for i in range(len(TEXTS))], TEXTS)
    words = frozenset(w for t in TEXTS for w in re.findall(r"[a-z]+", t.lower()))
    return index, words


def test_slips_are_one_keystroke_away():
    found = slips("maching")
    assert {"matching", "machin", "mching", "amching", "macing"} <= found  # dropped, struck twice, swapped
    assert "maxhing" in found  # c and x are neighbouring keys
    assert "machine" not in found  # g and e are not: two slips, not one
    assert "maching" not in found


@pytest.mark.parametrize(("question", "expected"), [
    ("discrimnators for flow maching", {"discrimnators": "discriminators", "maching": "matching"}),
    ("Discrimnators for flow maching?", {"discrimnators": "discriminators", "maching": "matching"}),
    ("why does the reveral curse happen", {"reveral": "reversal"}),  # beside "curse", not "reveal"
    ("fine-tuning by maskng weights", {"maskng": "masking"}),
    # English words the library lacks, names and short words stay
    ("pasta recipes with seasonal vegetables", {}),
    ("does LoRA or DPO help flow matching", {}),
    ("KFAC for PINNs on a gpu", {}),
    ("doesn't masking hurt", {}),
    ("xqzvw of flow matching", {}),  # nothing the library says is one slip away
    ("ε-greedy explration", {"explration": "exploration"}),
    ("用flow maching做生成的论文", {"maching": "matching"}),  # English words beside Chinese ones
    ("word2vec-style maskng", {"maskng": "masking"}),
    # another language: its words are not typos ("avec" is not "vec"), nor is a word of three letters offered
    ("Comment les modèles sont-ils affinés avec des masques ?", {}),
    ("le flow matching avec discriminateur", {}),
])
def test_typos_are_read_against_the_library(small, question, expected):
    index, words = small
    assert typos(question, index, words) == expected


def test_only_the_chunks_the_question_may_see_choose_a_mend(small):
    import numpy as np

    index, words = small
    seen = np.ones(len(TEXTS), dtype=bool)
    assert typos("flow maching", index, words, seen) == {"maching": "matching"}
    seen[[0, 1]] = False  # the chunks saying "matching" are another server's
    assert typos("flow maching", index, words, seen) == {}


def test_mend_keeps_case_and_the_rest_of_the_text():
    assert mend("Discrimnators for flow maching? @x", {"discrimnators": "discriminators", "maching": "matching"}) \
        == "Discriminators for flow matching? @x"
    assert mend("no typos here", {}) == "no typos here"


def test_a_misspelt_question_is_searched_mended_and_cites_the_paper_spelt_right(library):
    right = library.search("How do discriminators help flow matching models?")
    typed = library.search("How do discrimnators help flow maching models?")
    assert typed.query == "How do discriminators help flow matching models?"
    assert not typed.abstained
    assert [h.paper_id for h in typed.hits if h.relevant] == [h.paper_id for h in right.hits if h.relevant]


def test_every_bundled_question_with_a_typo_gets_the_same_citations(library):
    rows = [json.loads(line) for line in (DATA / "bundled_questions.jsonl").read_text().splitlines() if line.strip()]
    changed = 0
    for row in rows:
        q = row["question"]
        typed = misspelt(q, q, words=1, slips=1)
        changed += typed != q
        plain, noisy = extractive_answer(library.search(q)), extractive_answer(library.search(typed))
        assert ([c.paper_id for c in noisy.citations], noisy.abstained) == \
            ([c.paper_id for c in plain.citations], plain.abstained), (q, typed)
    assert changed >= len(rows) * 0.8  # the questions were misspelt


def test_the_english_words_of_a_chinese_question_are_mended_before_it_is_translated(library):
    right = library.search("有没有用discriminators改进flow matching模型的论文？")
    typed = library.search("有没有用discrimnators改进flow maching模型的论文？")
    assert "matching" in typed.query and "maching" not in typed.query
    assert typed.query == right.query
    assert [h.paper_id for h in typed.hits if h.relevant] == [h.paper_id for h in right.hits if h.relevant]
