"""A paper is cited only for a sentence that answers the question; abstention follows that evidence."""

from __future__ import annotations

import pytest

from retrieval.answer import extractive_answer
from retrieval.snippets import answer_score, answering, best_answer, score_sentences
from retrieval.types import Quote

HIPHY = "p92a182909f92740"  # the physics-aware video generation paper of the bundled corpus


def _labels(answer) -> list[str]:
    return [c.label for c in answer.citations]


def test_masking_question_cites_the_masking_paper_only(library):
    answer = extractive_answer(library.search("how do people fine-tune by masking weights?"))
    assert _labels(answer) == ["BMT"], _labels(answer)
    # the multistage-training paper ranks near the top but says nothing about masks
    multistage = [h for h in answer.hits if "model of multistage training" in h.paper.abstract]
    assert multistage and not multistage[0].relevant


def test_offline_rl_cites_offline_papers_not_the_physics_one(library):
    answer = extractive_answer(library.search("offline reinforcement learning"))
    assert answer.citations and HIPHY not in [c.paper_id for c in answer.citations]
    for c in answer.citations:
        assert "offline" in c.quote.lower(), (c.label, c.quote)


def test_a_detail_question_cites_the_sentence_with_the_detail(library):
    answer = extractive_answer(library.search("How much faster does SMEPO make training?"))
    assert _labels(answer) == ["SMEPO"]
    assert "4.2" in answer.citations[0].quote


def test_latex_is_readable_in_the_terminal_and_kept_in_json(library):
    from bot.terminal import render_answer_text

    answer = extractive_answer(library.search("How much faster does SMEPO make training?"))
    data = answer.to_json()
    assert r"4.2$\times$" in data["answer"] and r"4.2$\times$" in data["citations"][0]["quote"]
    shown = render_answer_text(answer)
    assert "4.2×" in shown and "$" not in shown and "\\times" not in shown


@pytest.mark.parametrize("question", [
    "reduce object hallucinations in vision-language models with contrastive decoding",
    "graph neural networks for molecular property prediction",
    "watermarking the text of large language models",
])
def test_off_corpus_questions_that_share_words_abstain(library, question):
    result = library.search(question)
    assert result.abstained, [(h.label, h.answer) for h in result.hits]
    assert result.hits, "the closest papers are still listed"


def test_search_within_papers_judges_them_among_themselves(library):
    # Over the whole corpus, many RL papers answer better, and HiPhy falls outside the margin.
    whole = library.search("does use reinforcement learning?", k=25)
    assert HIPHY not in [h.paper_id for h in whole.hits if h.relevant]
    scoped = library.search("does use reinforcement learning?", within=[HIPHY])
    assert [h.paper_id for h in scoped.hits] == [HIPHY] and not scoped.abstained
    assert "reinforcement learning" in scoped.hits[0].snippet


def test_search_within_unknown_papers_abstains(library):
    result = library.search("reinforcement learning", within=["p-no-such-paper"])
    assert result.abstained and result.hits == []


def test_answering_bar_is_the_threshold_or_the_best_minus_the_margin():
    assert answering([1.5, 1.2, 1.05, None], min_answer=0.8, margin=0.4) == [True, True, False, None]
    assert answering([0.7, 0.5], min_answer=0.8, margin=0.4) == [False, False]
    assert answering([None], min_answer=0.8, margin=0.4) == [None]


def test_sentences_are_scored_by_cosine_and_term_coverage():
    import numpy as np

    quotes = [Quote("We study cats.", 0, 14), Quote("Dogs bark at the mailman.", 15, 40)]
    vectors = np.array([[1.0, 0.0], [0.6, 0.8]], dtype=np.float16)
    terms = {"dog": 0.5, "bark": 0.5}
    scored = score_sentences(quotes, vectors, np.array([1.0, 0.0]), terms)
    assert scored[0].quote.text.startswith("Dogs")  # cosine 0.6 + full coverage beats cosine 1.0 alone
    assert scored[0].score == pytest.approx(answer_score(0.6, 1.0), abs=1e-3)
    # terms in the paper's title count for every sentence's answer, not for which sentence is quoted
    titled = score_sentences(quotes, vectors, np.array([1.0, 0.0]), terms, title="Barking dogs")
    assert [s.quote.text for s in titled] == [s.quote.text for s in scored]
    assert all(s.titled == pytest.approx(1.0) for s in titled) and titled[1].coverage == 0.0
    assert best_answer(titled) == pytest.approx(answer_score(1.0, 1.0), abs=1e-3)
