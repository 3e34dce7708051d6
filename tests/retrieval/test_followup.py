"""Follow-up questions read against earlier turns: what is searched and which papers it is about."""

from __future__ import annotations

import pytest

from retrieval.followup import FollowUp, Turn, best_sentence, bounded, resolve
from retrieval.qa import scoped_search
from tests.bot.conftest import StubLibrary

TOPIC = "how do people fine-tune by masking weights?"
EARLIER = [Turn(TOPIC, ("pA", "pB", "pC"))]


@pytest.mark.parametrize("question, query, papers, pinned", [
    # numbered references scope to the papers named, each cited
    ("[2]", TOPIC, ("pB",), True),
    ("tell me more about the second paper", TOPIC, ("pB",), True),
    ("compare 1 and 3", TOPIC, ("pA", "pC"), True),
    ("paper 3 vs paper 1", TOPIC, ("pC", "pA"), True),
    ("what does [3] measure on ImageNet?", "what does measure on ImageNet?", ("pC",), True),
    ("the last one", TOPIC, ("pC",), True),
    # "it", "they", "these": the papers cited last, retrieval decides which answer
    ("which of these uses GRPO?", "uses GRPO?", ("pA", "pB", "pC"), False),
    ("does it use RL?", "does use RL?", ("pA", "pB", "pC"), False),
    ("do they release code?", "do release code?", ("pA", "pB", "pC"), False),
    ("that one?", TOPIC, ("pA", "pB", "pC"), False),
    # elliptical questions are searched with the question they continue
    ("and for vision models?", f"{TOPIC} for vision models?", (), False),
    ("any with code?", f"{TOPIC} with code?", (), False),
    ("what about pruning?", f"{TOPIC} pruning?", (), False),
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


def test_without_history_every_question_stands_alone():
    for q in ["[2]", "compare 1 and 3", "and for vision models?", "does it use RL?"]:
        assert resolve(q, []) == FollowUp(q, q)
        assert resolve(q, []).standalone


def test_references_point_to_the_latest_answer_that_cited_papers():
    history = [Turn("sparse masks", ("pA", "pB")), Turn("zzzz", ())]  # the last answer abstained
    assert resolve("[2]", history).papers == ("pB",)
    history = [Turn("sparse masks", ("pA", "pB")), Turn("vision", ("pX", "pY"))]
    assert resolve("[2]", history).papers == ("pY",)


def test_ellipses_chain_back_to_the_question_they_continue():
    history = [Turn("sparse masks", ("pA",)), Turn("and for vision models?", ("pB",))]
    assert resolve("any with code?", history).query == "sparse masks for vision models? with code?"


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
