"""The question-level check: each question word matched in the paper's tokens, names by their letters, and the
abstention it decides (retrieval/support.py, retrieval/decision.py `answered`)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from retrieval.decision import answered
from paperbot.records import Paper
from retrieval.library import Library
from retrieval.support import (PaperTokens, distinctive_name, joint, leave_out, named, paper_name, question_words,
                               support, unnamed)
from tests.conftest import make_settings, seed_store

MASKING = "fine-tuning a language model by zeroing a tiny fraction of its weights"


def _bmt(library):
    return next(p for p in library.papers() if p.label == "BMT")


def test_a_word_the_paper_never_speaks_to_lowers_its_support(library, embedder):
    bmt, idf = _bmt(library), library.retriever.view().keyword.idf
    tokens = PaperTokens(embedder)(bmt)
    plain = question_words(embedder, MASKING, idf)
    asked = question_words(embedder, MASKING + " inside a Mamba state space model for protein folding", idf)
    assert plain is not None and asked is not None
    assert support(asked, tokens) < support(plain, tokens) - 0.02
    assert asked.names == ("Mamba",) and unnamed(asked, bmt) == 1.0
    assert plain.names == () and unnamed(plain, bmt) == 0.0


def test_a_constraint_the_paper_lacks_pulls_the_question_away_from_it(library, embedder):
    bmt, idf = _bmt(library), library.retriever.view().keyword.idf
    paper = embedder.encode([f"{bmt.title}. {bmt.abstract}"])
    found = {}
    for text in (MASKING, MASKING + " for speech recognition in hospitals"):
        words = question_words(embedder, text, idf)
        assert words is not None
        found[text] = leave_out(embedder, text, words, embedder.encode([text])[0], paper)
    plain, constrained = found.values()
    # the plain question hardly comes closer without any of its words; without "speech" or "hospitals" the
    # constrained one does, by more than a typical question's spread (about 0.008)
    assert constrained > plain + 0.008
    assert leave_out(embedder, MASKING, question_words(embedder, MASKING, idf), paper[0], paper[:0]) == 0.0


def test_a_question_of_one_word_has_none_to_leave_out(library, embedder):
    # left without its one word nothing of the question remains, so the fall in cosine says nothing of a near miss:
    # read as it was, it made every one-word query ("results", "test") answered with certainty
    bmt, idf = _bmt(library), library.retriever.view().keyword.idf
    paper = embedder.encode([f"{bmt.title}. {bmt.abstract}"])
    for text in ("masking", "What is BMT?"):
        words = question_words(embedder, text, idf)
        assert words is not None and len(words.spans) == 1
        assert leave_out(embedder, text, words, embedder.encode([text])[0], paper) == 0.0
    two = "masking weights"
    words = question_words(embedder, two, idf)
    assert words is not None and leave_out(embedder, two, words, embedder.encode([two])[0], paper) != 0.0


def test_a_lone_common_word_is_not_answered_for_certain(library):
    result = library.search("limitations")  # ("results" is not searched now: too general)
    assert result.abstained and result.answered is not None and result.answered < 0.5


@pytest.mark.parametrize("title, label, name", [
    ("FineStyle: Fine-grained Controllable Style Personalization", "", "FineStyle"),
    ("", "BMT", "BMT"),
    ("Large Language Models Can Learn to Skip Steps", "", ""),  # a title, not a name
    ("", "Factual sycophancy across three post-training pipelines", ""),
])
def test_a_paper_s_short_name(title, label, name):
    assert paper_name(Paper(paper_id="p", source="s.txt", position=1, abstract="", label=label, title=title)) == name


@pytest.mark.parametrize("name, distinctive", [
    ("BMT", True), ("DiffAug", True), ("Meta-Controller", True), ("D2R2", True), ("LIVE", True),
    ("Devyn", False), ("Frolic", False),  # a capitalised word could be any word at a sentence's start
    ("Scaling Laws", False), ("", False),
])
def test_a_short_name_that_no_common_word_could_be(name, distinctive):
    assert distinctive_name(name) is distinctive


def test_a_question_saying_the_paper_s_name_asks_about_it(library):
    bmt = _bmt(library)
    assert named("How much compute does BMT need compared with LoRA?", bmt) == 1.0
    assert named("how much compute do sparse masks need?", bmt) == 0.0
    assert named("how do people fine-tune by masking weights?", bmt) == 0.0


def test_a_question_of_stopwords_only_has_no_words_to_match(library, embedder):
    assert question_words(embedder, "what is it and how does it do that?", library.retriever.view().keyword.idf) is None


def test_paper_tokens_are_read_once_per_paper_version(library, embedder):
    calls = []

    class Counting:
        dimension = embedder.dimension

        def encode_tokens(self, texts):
            calls.append(len(texts))
            return embedder.encode_tokens(texts)

    tokens = PaperTokens(Counting(), size=1)  # type: ignore[arg-type]  # only encode_tokens and dimension are read
    bmt = _bmt(library)
    first = tokens(bmt)
    assert tokens(bmt) is first and len(calls) == 1
    assert first.shape[1] == embedder.dimension and len(first) > 100  # title and every sentence, token by token


def test_the_question_check_decides_the_abstention_and_the_closest_papers_stay(tmp_path, embedder, corpus_dir,
                                                                              bundled_store):
    results = {}
    # (per-paper bar, question bar): the check decides either way; with it off, the per-paper bar alone
    for name, env in {"answered": {"RETRIEVAL_MIN_ANSWERED": "0.001"},
                      "not answered": {"RETRIEVAL_MIN_ANSWERED": "1"},
                      "below the per-paper bar": {"RETRIEVAL_MIN_CONFIDENCE": "1", "RETRIEVAL_MIN_ANSWERED": "0.001"},
                      "below it, unchecked": {"RETRIEVAL_MIN_CONFIDENCE": "1", "RETRIEVAL_MIN_ANSWERED": "0"},
                      "below the floor": {"RETRIEVAL_MIN_CHECKED": "1", "RETRIEVAL_MIN_ANSWERED": "0.001"}}.items():
        home = tmp_path / name.replace(" ", "_").replace(",", "")
        seed_store(bundled_store, home)
        with Library(make_settings(home, PAPERBOT_CORPUS=str(corpus_dir), **env), embedder=embedder) as lib:
            lib.ingest()
            results[name] = lib.search("how do people fine-tune by masking weights?")
    answered_, refused = results["answered"], results["not answered"]
    assert not answered_.abstained and answered_.question is not None
    assert refused.abstained and refused.hits, "the closest papers are still listed"
    assert refused.answered == answered_.answered and 0.0 < (answered_.answered or 0.0) < 1.0
    # the most probable paper is cited on the question-level model's word, short of the per-paper bar: BMT alone
    rescued = results["below the per-paper bar"]
    assert [h.paper.label for h in rescued.hits if h.relevant] == ["BMT"]
    assert results["below it, unchecked"].abstained and results["below it, unchecked"].question is None
    # no paper reaches the floor: nothing is checked, and the per-paper decision stands
    assert results["below the floor"].question is None and not results["below the floor"].abstained


def test_a_word_by_word_translation_has_its_own_bars_and_is_checked_only_to_abstain(tmp_path, embedder, corpus_dir,
                                                                                     bundled_store):
    chinese, english = "怎么通过屏蔽权重来微调模型？", "how do people fine-tune by masking weights?"
    off_topic = "扩散模型怎么加速采样？"  # "diffusion model speed up sampling": no bundled paper; a bandit paper ranks first
    results = {}
    settings = {"default": {}, "strict": {"RETRIEVAL_MIN_CONFIDENCE_TRANSLATED": "1"},
                "loose": {"RETRIEVAL_MIN_CONFIDENCE_TRANSLATED": "0.001", "RETRIEVAL_MIN_CONFIDENCE": "1"},
                "unchecked": {"RETRIEVAL_MIN_ANSWERED_TRANSLATED": "0"},
                "strict check": {"RETRIEVAL_MIN_ANSWERED_TRANSLATED": "1"}}
    for name, env in settings.items():
        home = tmp_path / name
        seed_store(bundled_store, home)
        with Library(make_settings(home, PAPERBOT_CORPUS=str(corpus_dir), **env), embedder=embedder) as lib:
            lib.ingest()
            results[name] = (lib.search(chinese), lib.search(english), lib.search(off_topic))
    (zh, en, off), (strict_zh, strict_en, _), (loose_zh, loose_en, _), (_, _, unchecked_off), (checked_zh, checked_en, _) \
        = results.values()
    assert not zh.abstained and zh.hits[0].paper.label == "BMT" and en.question is not None
    assert zh.answered is not None and zh.answered >= 0.02
    # the translated bar decides which papers; the English question keeps its own decision
    assert strict_zh.abstained and not strict_en.abstained, "a translation's answered question cites nothing below its bar"
    assert not loose_zh.abstained and [h.paper.label for h in loose_en.hits if h.relevant] == ["BMT"]
    # the question-level check only abstains for a translation: a paper past the per-paper bar whose question
    # the model reads as unanswered is not cited
    assert not unchecked_off.abstained and unchecked_off.question is None
    assert off.abstained and off.answered is not None and off.answered < 0.02
    assert [h.paper_id for h in off.hits] == [h.paper_id for h in unchecked_off.hits], "ranking untouched"
    assert checked_zh.abstained and not checked_en.abstained


def test_a_follow_up_about_cited_papers_skips_the_question_check(library):
    bmt = _bmt(library)
    scoped = library.search("how big is it?", within=[bmt.paper_id])
    assert scoped.question is None and scoped.answered is None


def test_the_answered_probability_falls_with_support_an_unsaid_name_and_a_word_pulling_away(library):
    found = library.search("how do people fine-tune by masking weights?")
    assert found.question is not None
    q = found.question
    assert answered(replace(q, support=q.support - 0.1)) < answered(q)
    assert answered(replace(q, unnamed=1.0)) < answered(q)
    assert answered(replace(q, leave_out=q.leave_out + 0.01)) < answered(q)
    assert answered(replace(q, named=1.0)) > answered(q)
    # read beside the other signals, a question that comes closer to itself read together with the abstract is
    # less likely answered (the fitted sign, docs/benchmarks.md "The question read with the abstract")
    assert q.joint is not None and answered(replace(q, joint=q.joint + 0.05)) < answered(q)


def test_the_question_is_read_together_with_the_first_paper_s_abstract(library, embedder):
    bmt = _bmt(library)
    drl = next(p for p in library.papers() if p.label == "DRL")
    idf = library.retriever.view().keyword.idf
    words, vector = question_words(embedder, MASKING, idf), embedder.encode([MASKING])[0]
    assert words is not None
    read = joint(embedder, MASKING, words, vector, bmt)
    assert read == pytest.approx(float(embedder.encode([f"{MASKING} [SEP] {bmt.abstract}"])[0] @ vector), abs=1e-5)
    other = joint(embedder, MASKING, words, vector, drl)
    assert read is not None and other is not None and 0.0 < read < 1.0 and abs(read - other) > 0.01
    found = library.search(MASKING)  # BMT is the paper the question-level model reads
    assert found.question is not None and found.hits[0].paper.label == "BMT"
    assert found.question.joint == pytest.approx(read, abs=1e-4)
    # one word beside a whole abstract is read as the abstract: no reading, and the model takes its mean
    lone = question_words(embedder, "limitations", idf)
    assert lone is not None and joint(embedder, "limitations", lone, embedder.encode(["limitations"])[0], bmt) is None


def test_a_chinese_question_translated_word_by_word_is_not_held_to_the_english_bar(library):
    chinese = library.search("通过把少量权重置零来微调大语言模型")
    assert chinese.query != "通过把少量权重置零来微调大语言模型" and chinese.answered is not None
    # its translation reads poorly word by word: below the English bar, above the translation's
    bars = library.settings.retrieval
    assert bars.min_answered_translated <= chinese.answered < bars.min_answered
    assert not chinese.abstained and chinese.hits[0].paper.label == "BMT"


@pytest.mark.parametrize("question", ["model", "learning", "models?", "模型"])
def test_a_question_whose_every_word_is_in_many_papers_is_too_general_to_answer(library, question):
    from paperbot import messages
    from retrieval.answer import extractive_answer
    from retrieval.filters import Filters
    from retrieval.types import TOO_GENERAL

    result = library.search(question)
    assert result.abstained and result.reason == TOO_GENERAL and result.hits, "the papers are still listed"
    assert not any(h.relevant or h.plausible for h in result.hits), "nor passed to an LLM"
    lang = "zh" if question == "模型" else "en"
    answer = extractive_answer(result, lang)
    assert answer.abstained and answer.text == messages.text("TOO_GENERAL", lang) and answer.hits == []
    # a word that picks papers out beside it, a follow-up about known papers or a filter decide as before
    assert library.search(f"sycophancy {question}").reason != TOO_GENERAL
    bmt = _bmt(library)
    assert library.search(question, within=[bmt.paper_id]).reason != TOO_GENERAL
    assert library.search(question, filters=Filters(keyword="sycophancy")).reason != TOO_GENERAL
