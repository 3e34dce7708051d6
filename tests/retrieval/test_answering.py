"""A paper is cited only for a sentence that answers the question; abstention follows that evidence."""

from __future__ import annotations

import pytest

from retrieval.answer import extractive_answer
from retrieval.snippets import answer_score, best_answer, quotes_of, score_sentences
from retrieval.types import Quote

HIPHY = "p92a182909f92740"  # the physics-aware video generation paper of the bundled corpus


def _abstract(*sentences: str) -> list[Quote]:
    """An abstract's sentences as quotes, each with its span in the abstract (one space between them)."""
    quotes, start = [], 0
    for text in sentences:
        quotes.append(Quote(text, start, start + len(text)))
        start += len(text) + 1
    return quotes


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
    "watermarking the text of large language models",
    "federated learning with non-IID clients",
    "how does a mortgage work?",
    "what is the plot of Hamlet?",
])
def test_off_corpus_questions_abstain(library, question):
    result = library.search(question)
    assert result.abstained, [(h.label, h.confidence) for h in result.hits]
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


def test_confidence_grows_with_the_evidence_and_stays_a_probability():
    from retrieval.decision import Evidence, confidence

    base = dict(lead=0.0, gap=1.0, fused=5.0, answer=0.8, answer_lead=0.0, coverage=0.5, missing=0.2, dense=0.45,
                cosine=0.5, sentence_coverage=0.4, missing_known=0.1, terms=2.0, complement=0.3,
                answer_margin=0.2, dense_margin=0.05)
    p = confidence(Evidence(**base))
    assert 0.0 < p < 1.0
    for name, more in [("answer_margin", 0.6), ("coverage", 0.9), ("dense_margin", 0.2)]:
        assert confidence(Evidence(**{**base, name: more})) > p, name
    assert confidence(Evidence(**{**base, "complement": 0.7})) < p  # another paper holds what this one lacks


def test_a_paper_without_an_abstract_is_judged_by_its_chunks(library):
    from retrieval.search import RankedPaper

    retriever = library.retriever
    assert retriever.is_relevant(RankedPaper("p", 1.0, dense=0.9, lexical=0.0, bm25=1.0))
    assert not retriever.is_relevant(RankedPaper("p", 1.0, dense=0.1, lexical=0.1, bm25=1.0))


def test_the_focus_word_outweighs_the_topic_words():
    import numpy as np

    quotes = _abstract("Flow matching models often rely on preference-based reinforcement learning.",
                       "Flow matching models generate images from noise.",
                       "We train a discriminator to separate data from samples and use its logit as the reward.")
    vectors = np.array([[0.8, 0.6], [0.75, 0.66], [0.5, 0.87]], dtype=np.float16)
    terms = {"flow": 0.2, "match": 0.2, "model": 0.1, "discrimin": 0.5}
    scored = score_sentences(quotes, vectors, np.array([1.0, 0.0]), terms, title="Discriminator rewards for flow models")
    assert scored[0].quote.text.startswith("We train a discriminator"), [s.quote.text for s in scored]
    assert scored[0].focus > scored[1].focus


def test_a_how_question_quotes_the_method_not_the_results():
    import numpy as np

    quotes = _abstract("Continual learning on non-stationary data streams loses plasticity.",
                       "We model the drift of the parameters as an Ornstein-Uhlenbeck process.",
                       "We show empirically that our approach performs well on non-stationary data streams.")
    vectors = np.array([[0.8, 0.6], [0.7, 0.71], [0.8, 0.6]], dtype=np.float16)
    terms = {"stream": 0.3, "non": 0.1, "stationari": 0.3, "drift": 0.3}
    question = np.array([1.0, 0.0])
    asked_how = score_sentences(quotes, vectors, question, terms, how=True)
    assert asked_how[0].quote.text.startswith("We model the drift"), [s.quote.text for s in asked_how]
    assert asked_how[0].how_method == 1.0 and asked_how[-1].how_method == 0.0
    # the same sentences for a question that does not ask how: nothing is read as a method or a result
    plain = score_sentences(quotes, vectors, question, terms)
    assert all(s.how_method == s.how_result == s.how_first == 0.0 for s in plain)


def test_a_how_question_quotes_the_sentence_naming_the_mechanism(library):
    answer = extractive_answer(library.search("How do discriminators help flow matching models?"))
    assert answer.citations and answer.citations[0].label == "DRL", _labels(answer)
    assert "trains a discriminator" in answer.citations[0].quote


def test_where_the_code_is_is_quoted_to_a_question_asking_for_it_and_to_no_other():
    import numpy as np

    # the link sentence is the closest to the question; it says where the code is, not how the method works
    quotes = _abstract("Text-to-image models can be prompted to make unsafe images.",
                       "GuardT2I turns the prompt embedding back into plain text with a conditional language model.",
                       "Our framework is available at https://github.com/cure-lab/GuardT2I.")
    vectors = np.array([[0.6, 0.8], [0.85, 0.53], [0.95, 0.31]], dtype=np.float16)
    terms = {"guardt": 1.0}
    question = np.array([1.0, 0.0])  # "how does GuardT2I work?"
    scored = score_sentences(quotes, vectors, question, terms, how=True, asked=("GuardT2I",))
    assert scored[0].quote.text.startswith("Our framework is available"), [s.quote.text for s in scored]
    assert [q.text for q in quotes_of(scored)][0].startswith("GuardT2I turns the prompt embedding")
    assert all("github" not in q.text for q in quotes_of(scored))
    # "where is GuardT2I's code?": the link, beside the best of the other sentences
    assert [q.text for q in quotes_of(scored, code=True)] == [quotes[2].text, quotes[1].text]
    only_link = score_sentences(quotes[2:], vectors[2:], question, terms, how=True)  # nothing else to quote
    assert [q.text for q in quotes_of(only_link)] == [quotes[2].text]


def test_a_question_asking_for_a_named_paper_s_code_is_answered_from_its_link(library):
    answer = extractive_answer(library.search("is the ThinkSafe code public?"))
    assert _labels(answer) == ["ThinkSafe"], _labels(answer)
    assert "https://anonymous.4open.science/r/ThinkSafe-E486/" in answer.citations[0].quote
    # an abstract that links nothing does not answer where the code is: decided on the question's words
    result = library.search("is the BMT code public?")
    assert result.abstained and result.hits[0].paper.label == "BMT"
    assert not any("http" in q.text for h in library.search("what is ThinkSafe?").hits for q in h.quotes)


def test_a_request_for_code_with_a_wish_after_it_is_a_request_for_code(library):
    answer = extractive_answer(library.search("Is ThinkSafe open source? I'd like to try it."))
    assert _labels(answer) == ["ThinkSafe"], _labels(answer)
    assert "https://anonymous.4open.science/r/ThinkSafe-E486/" in answer.citations[0].quote


def test_a_paper_called_by_its_title_s_words_is_named(library):
    from dataclasses import replace

    from retrieval.decision import answered

    # "the sycophancy paper": one paper's title (here its label) says "sycophancy", so the question names it
    found = library.search("which models does the sycophancy paper test?")
    assert found.question is not None and found.question.named == 1.0
    assert answered(found.question) > answered(replace(found.question, named=0.0)) + 0.1
    answer = extractive_answer(library.search("what datasets does the sycophancy paper use?"))
    assert answer.citations and "sycophancy" in answer.citations[0].paper.label
    # said of a paper no title names so, the question is decided on its words alone
    other = library.search("what datasets does the robot locomotion paper use?")
    assert other.abstained and (other.question is None or other.question.named == 0.0)


def test_a_results_sentence_is_not_added_to_the_method_it_follows():
    import numpy as np

    quotes = _abstract("We propose ESPACE, an LLM compression technique based on dimensionality reduction of "
                       "activations by projecting them onto pre-calibrated principal components.",
                       "Our experiments show that ESPACE compresses GPT3 by 50% with a small accuracy loss.")
    vectors = np.array([[0.9, 0.44], [0.99, 0.14]], dtype=np.float16)
    terms = {"espac": 1.0}
    question = np.array([1.0, 0.0])  # "what is ESPACE?"
    scored = score_sentences(quotes, vectors, question, terms, asked=("ESPACE",))
    assert scored[1].probability >= 0.7 * scored[0].probability  # near enough to be quoted beside it ...
    assert [q.text for q in quotes_of(scored)] == [quotes[0].text]  # ... but it reports, and the first says how
    # a question asking for a number ("how much does ESPACE compress GPT3?") is answered by the result
    counted = score_sentences(quotes, vectors, question, terms, asked=("ESPACE",), quantity=True)
    assert quotes[1].text in [q.text for q in quotes_of(counted)]


def test_sentences_are_scored_with_term_coverage_and_title():
    import numpy as np

    quotes = [Quote("We study cats.", 0, 14), Quote("Dogs bark at the mailman.", 15, 40)]
    vectors = np.array([[1.0, 0.0], [0.6, 0.8]], dtype=np.float16)
    terms = {"dog": 0.5, "bark": 0.5}
    scored = score_sentences(quotes, vectors, np.array([1.0, 0.0]), terms)
    assert scored[0].quote.text.startswith("Dogs")  # the question's words beat a higher cosine alone
    assert scored[0].coverage == pytest.approx(1.0) and scored[1].coverage == 0.0
    # terms in the paper's title count for every sentence's answer, not for which sentence is quoted
    titled = score_sentences(quotes, vectors, np.array([1.0, 0.0]), terms, title="Barking dogs")
    assert [s.quote.text for s in titled] == [s.quote.text for s in scored]
    assert all(s.titled == pytest.approx(1.0) for s in titled) and titled[1].coverage == 0.0
    assert best_answer(titled) == pytest.approx(answer_score(1.0, 1.0), abs=1e-3)


def test_what_a_name_is_is_quoted_from_the_sentence_introducing_it(library):
    # "BMT reaches FPT accuracy …" uses the name; the sentence that says what BMT is introduces it
    answer = extractive_answer(library.search("what is BMT?"))
    assert _labels(answer) == ["BMT"], _labels(answer)
    assert answer.citations[0].quote.startswith("We call the method Bit-Mask Tuning (BMT)"), answer.citations[0].quote


def test_a_question_naming_two_papers_cites_both_and_nothing_else(library):
    result = library.search("compare DRL and BMT")
    assert not result.abstained
    assert sorted(h.paper.label for h in result.hits if h.relevant) == ["BMT", "DRL"]
    assert [h.paper.label for h in result.hits[:2]] in (["DRL", "BMT"], ["BMT", "DRL"])  # the named papers first


def test_a_name_said_in_another_case_or_as_a_common_word_names_no_paper(library):
    # the lower-case word is not the name as the paper writes it: the question is decided on its words
    assert not library.retriever.view().called("what is bmt?")
    assert library.retriever.view().called("what is BMT?") == [h.paper_id for h in library.search("BMT").hits[:1]]


def test_a_name_beside_another_topic_is_decided_on_the_question_s_words(library):
    # "DRL" is the discriminator paper's name, and deep reinforcement learning's too: robot locomotion is absent
    assert library.search("DRL for robot locomotion").abstained


@pytest.mark.parametrize("question", ["比较一下DRL和BMT", "DRL跟BMT比怎么样", "DRL和BMT有什么区别？"])
def test_a_chinese_question_comparing_two_named_papers_cites_both(library, question):
    result = library.search(question)
    assert sorted(h.paper.label for h in result.hits if h.relevant) == ["BMT", "DRL"], question
