"""Follow-up questions read against earlier turns: what is searched and which papers it is about."""

from __future__ import annotations

import pytest

from retrieval.followup import FollowUp, Turn, best_sentence, bounded, code_sentence, resolve
from retrieval.qa import scoped_search
from tests.bot.conftest import StubLibrary

TOPIC = "how do people fine-tune by masking weights?"
EARLIER = [Turn(TOPIC, ("pA", "pB", "pC"), labels=("BMT", "Novel red teaming paradigm designed to maximize expected…",
                                                    "NV-CoT"))]
ABOUT_ONE = [Turn("What is NV-CoT?", ("pN",), labels=("NV-CoT",))]
ABSTAINED = [Turn("which papers are about LLM safety?", (), shown=("pS", "pT", "pU"))]


@pytest.mark.parametrize("question, query, papers, pinned", [
    # explicit references scope to the papers named, each cited; a reference alone is searched with the topic
    ("[2]", TOPIC, ("pB",), True),
    ("tell me more about the second paper", TOPIC, ("pB",), True),
    ("compare 1 and 3", TOPIC, ("pA", "pC"), True),
    ("Compare 2 and 3.", TOPIC, ("pB", "pC"), True),  # the period does not hide the 3
    ("how do 1 and 2 differ?", TOPIC, ("pA", "pB"), True),
    ("paper 3 vs paper 1", TOPIC, ("pC", "pA"), True),
    ("the last one", TOPIC, ("pC",), True),
    ("the first two", TOPIC, ("pA", "pB"), True),
    # a reference in a question of its own is replaced by the paper's short label: nothing is cut out
    ("what does [3] measure on ImageNet?", "what does NV-CoT measure on ImageNet?", ("pC",), True),
    ("what does [2] measure on ImageNet?", "what does [2] measure on ImageNet?", ("pB",), True),  # long label: as asked
    # Chinese references
    ("第二篇论文讲了什么？", TOPIC, ("pB",), True),
    ("前两篇", TOPIC, ("pA", "pB"), True),
    ("比较 1 和 3", TOPIC, ("pA", "pC"), True),
    ("比较第一篇和第三篇", TOPIC, ("pA", "pC"), True),
    ("最后一篇", TOPIC, ("pC",), True),
    # scope: the papers shown last, retrieval decides which answer
    ("which of these uses GRPO?", "uses GRPO", ("pA", "pB", "pC"), False),  # without the framing, still readable
    ("其中哪些使用了 GRPO？", "其中哪些使用了 GRPO？", ("pA", "pB", "pC"), False),
    ("do they release code?", "release code", ("pA", "pB", "pC"), False),
    # "it" after an answer citing several papers: the one of them the follow-up matches best
    ("does it use RL?", "does it use RL?", ("pA", "pB", "pC"), False),
    # elliptical questions without a topic of their own are searched with the question they continue
    ("and for vision models?", f"{TOPIC} for vision models?", (), False),
    ("what about pruning?", f"{TOPIC} pruning?", (), False),
    # a topic of its own that shares nothing with the conversation is a fresh question
    ("And is there any work on optimizing molecules around a fixed scaffold?",
     "is there any work on optimizing molecules around a fixed scaffold?", (), False),
    # a question of its own is searched as asked
    ("what is visual chain of thought?", "what is visual chain of thought?", (), False),
    ("is it possible to prune LLMs without retraining at all?",
     "is it possible to prune LLMs without retraining at all?", (), False),
    ("compare BERT with GPT-4", "compare BERT with GPT-4", (), False),
    ("[7]", f"{TOPIC} [7]", (), False),  # no seventh paper: nothing to scope; searched with the topic
])
def test_follow_up_table(question, query, papers, pinned):
    got = resolve(question, EARLIER)
    assert (got.query, got.papers, got.pinned) == (query, papers, pinned)


@pytest.mark.parametrize("question, query", [
    ("Does it need big architectural changes?", "Does NV-CoT need big architectural changes?"),
    ("How big is the dataset it builds?", "How big is the dataset NV-CoT builds?"),
    ("what are its limitations?", "what are NV-CoT's limitations?"),
    ("does this method use GRPO?", "does NV-CoT use GRPO?"),
    ("它需要外部教师模型吗？", "NV-CoT 需要外部教师模型吗？"),
    ("该方法需要很大的架构改动吗？", "NV-CoT 需要很大的架构改动吗？"),
])
def test_a_pronoun_after_a_one_paper_answer_is_that_paper_named_in_the_query(question, query):
    got = resolve(question, ABOUT_ONE)
    assert (got.query, got.papers, got.pinned, got.kind) == (query, ("pN",), True, "pronoun")


def test_scope_after_an_abstention_is_the_closest_papers_it_listed():
    for question in ["Which of these release code?", "其中哪些公开了代码？"]:
        got = resolve(question, ABSTAINED)
        assert (got.papers, got.pinned, got.code) == (("pS", "pT", "pU"), False, True)
        assert got.topic == "which papers are about LLM safety?"  # to widen to what the topic retrieves
    assert resolve("tell me more about [2]", ABSTAINED).papers == ("pT",)
    assert resolve("does it use RL?", ABSTAINED).papers == ("pS", "pT", "pU")  # "it": one of those listed


def test_code_questions_are_about_the_papers_shown():
    for question in ["any with code?", "is the code available?", "有代码吗？", "有没有公开代码？"]:
        got = resolve(question, EARLIER)
        assert got.code and got.papers == ("pA", "pB", "pC") and not got.pinned, question
    assert not resolve("which code generation models use RL?", EARLIER).code  # a topic of its own


def test_an_own_topic_that_overlaps_the_conversation_is_tried_alone_first():
    got = resolve("What about text-only fine-tuning by masking?", EARLIER)
    assert got.alone == "text-only fine-tuning by masking?"
    assert got.query == f"{TOPIC} text-only fine-tuning by masking?"  # if alone retrieves nothing well


def test_chinese_ellipsis_joins_or_stands_alone_by_its_own_topic():
    history = [Turn("reward hacking", ("pA",))]
    assert resolve("那世界模型呢？", history).query == "reward hacking 世界模型"
    alone = resolve("那在局部差分隐私下呢？", [Turn("regret bounds for bandits", ("pB",))])
    assert alone.query == "在局部差分隐私" and not alone.papers


def test_without_history_every_question_stands_alone():
    for q in ["[2]", "compare 1 and 3", "and for vision models?", "does it use RL?", "第二篇"]:
        assert resolve(q, []) == FollowUp(q, q)
        assert resolve(q, []).standalone


def test_references_point_to_the_latest_answer_that_listed_papers():
    history = [Turn("sparse masks", ("pA", "pB")), Turn("zzzz", ())]  # the last answer listed nothing
    assert resolve("[2]", history).papers == ("pB",)
    history = [Turn("sparse masks", ("pA", "pB")), Turn("vision", ("pX", "pY"))]
    assert resolve("[2]", history).papers == ("pY",)


def test_ellipses_chain_back_to_the_question_they_continue():
    history = [Turn("sparse masks", ("pA",)), Turn("and for vision models?", ("pB",))]
    assert resolve("and in robotics?", history).query == "sparse masks for vision models? in robotics?"


def test_code_sentence_finds_the_release_statement_verbatim():
    abstract = ("We study masks. Experiments show gains. Code, models, and datasets are available at this "
                "[Github](https://example.org/x).")
    quote = code_sentence(abstract)
    assert quote.text.startswith("Code, models, and datasets are available")
    assert abstract[quote.start:quote.end] == quote.text
    assert code_sentence("We will release code and data for future research.") is not None
    assert code_sentence("We encode the pool with a language model. Gains on code and math.") is None


def test_history_is_bounded_in_turns_and_characters():
    turns = [Turn(f"question {i}", (f"p{i}",)) for i in range(20)]
    kept = bounded(turns, max_turns=6, max_chars=10_000)
    assert [t.question for t in kept] == [f"question {i}" for i in range(14, 20)]
    long = [Turn("x" * 1500), Turn("y" * 1500), Turn("z" * 100)]
    assert [t.question[0] for t in bounded(long, max_turns=6, max_chars=2000)] == ["y", "z"]


def test_best_sentence_is_verbatim_and_shares_most_words():
    abstract = "We study masks. Vision models use GRPO rewards here. Code is released."
    quote = best_sentence(abstract, "which uses GRPO rewards")
    assert quote.text == "Vision models use GRPO rewards here."
    assert abstract[quote.start:quote.end] == quote.text


def test_scoped_search_keeps_named_papers_and_lets_retrieval_judge_the_others():
    library = StubLibrary()
    ids = tuple(r.paper_id for r in library.records[:3])  # BMT, NV-CoT, @everyone
    named = scoped_search(library, "masking weights", FollowUp("compare 1 and 2", "masking weights", ids[:2], True))
    assert [h.paper_id for h in named.hits] == list(ids[:2]) and all(h.relevant for h in named.hits)
    for h in named.hits:
        assert h.paper.abstract[h.quotes[0].start:h.quotes[0].end] == h.quotes[0].text
    which = scoped_search(library, "continuous coordinates", FollowUp("which of these?", "continuous coordinates",
                                                                       ids, False))
    assert [h.label for h in which.hits if h.relevant] == ["NV-CoT"]
    assert {h.paper_id for h in which.hits} == set(ids)  # nothing from outside the conversation
    none = scoped_search(library, "grpo rewards", FollowUp("which of these uses GRPO?", "grpo rewards", ids, False))
    assert none.abstained


# -- with an LLM: the conversation is condensed into a standalone query, validated like a rewrite ------------

def _ask_with_llm(library, endpoint, question, history):
    import asyncio

    import httpx

    from retrieval.llm import LLMClient
    from retrieval.qa import answer_question
    from tests.retrieval.test_llm import llm_settings

    async def go():
        async with httpx.AsyncClient() as http:
            llm = LLMClient(llm_settings(endpoint), http)
            return await answer_question(library, question, llm=llm, history=history)

    return asyncio.run(go())


def test_with_an_llm_the_history_is_condensed_into_the_search_query():
    from tests.llm_server import Endpoint, Reply

    library = StubLibrary()
    history = [Turn("binary masks for sparse fine-tuning", ("p0000",))]
    with Endpoint() as endpoint:
        endpoint.enqueue(Reply.answer("continuous numerical coordinates as actions"),
                         Reply.answer("Models emit coordinates as actions [1]."))
        answer = _ask_with_llm(library, endpoint, "and for multimodal models?", history)
        condense, prompt = endpoint.requests[0]["body"], endpoint.requests[1]["body"]
    assert "binary masks for sparse fine-tuning" in condense["messages"][1]["content"]
    assert "Follow-up: and for multimodal models?" in condense["messages"][1]["content"]
    assert library.searches == ["continuous numerical coordinates as actions"]
    assert answer.search_query == "continuous numerical coordinates as actions"
    assert answer.mode == "llm" and answer.citations[0].label == "NV-CoT"
    assert "and for multimodal models?" in prompt["messages"][1]["content"]


def test_an_unusable_condensation_falls_back_to_the_deterministic_reading():
    from tests.llm_server import Endpoint, Reply

    library = StubLibrary()
    history = [Turn("binary masks for sparse fine-tuning", ("p0000",))]
    ramble = "Sure! " + "Here is a long explanation of what you might mean. " * 5
    with Endpoint() as endpoint:
        endpoint.enqueue(Reply.answer(ramble), Reply.answer("Bit masks match full fine-tuning [1]."))
        answer = _ask_with_llm(library, endpoint, "[1]", history)
    assert library.searches == ["binary masks for sparse fine-tuning"]  # the rules' query, scoped to [1]
    assert [c.label for c in answer.citations] == ["BMT"]
