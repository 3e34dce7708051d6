"""Chat noise around a question (mentions, emoji, links, code fences, greetings) never changes its answer."""

from __future__ import annotations

import json

import pytest

from benchmarks.common import DATA
from paperbot.text import search_text
from retrieval.answer import extractive_answer

NOISE = [
    "{q} @everyone",
    "<@123456789012345678> {q}",
    "hey <@&5>, {q} <#7> thanks!",
    "{q} <:pepe:112233445566778899> 👍",
    "{q} https://example.org/paper?id=3",
    "```{q}```",
    "`{q}`",
    "Hi there! {q}???",
    "good morning, {q} pls",
]


@pytest.mark.parametrize(("text", "expected"), [
    ("How do discriminators help flow matching models? @everyone", "How do discriminators help flow matching models?"),
    ("<@123> <@!9> <@&5> what is NV-CoT <#7> <:pog:123456> <a:dance:99>?", "what is NV-CoT?"),
    ("```what is BMT?```", "what is BMT?"),
    ("Hi! Which paper uses RLVR? https://x.com/a?b=1 thanks so much!", "Which paper uses RLVR?"),
    ("hello @here", ""),
    ("Which paper reduces FID from 9.38 to 2.62 on SiT.", "Which paper reduces FID from 9.38 to 2.62 on SiT"),
    ("why 👍 does it work ?!", "why does it work ?"),
    ("compare [1] and [3]", "compare [1] and [3]"),
    ("email me@everyone.org about it", "email me@everyone.org about it"),
    ("思维链推理有哪些方法？谢谢", "思维链推理有哪些方法？谢谢"),
    # a message only checking the bot is there holds no question; the same words inside one are kept
    ("test", ""), ("Testing 1 2 3!", ""), ("ping", ""), ("hey bot, are you still there?", ""), ("在吗", ""),
    ("test-time training", "test-time training"), ("testing the limits of LLMs", "testing the limits of LLMs"),
    ("test set contamination?", "test set contamination?"), ("is this working for graphs?", "is this working for graphs?"),
])
def test_search_text_table(text, expected):
    assert search_text(text) == expected


def _questions() -> list[str]:
    rows = [json.loads(line) for line in (DATA / "bundled_questions.jsonl").read_text().splitlines() if line.strip()]
    return [r["question"] for r in rows]


def test_every_bundled_question_gets_the_same_citations_with_noise(library):
    for q in _questions():
        plain = extractive_answer(library.search(q))
        want = ([c.paper_id for c in plain.citations], [c.quote for c in plain.citations], plain.abstained)
        for pattern in NOISE:
            noisy = extractive_answer(library.search(pattern.format(q=q)))
            got = ([c.paper_id for c in noisy.citations], [c.quote for c in noisy.citations], noisy.abstained)
            assert got == want, (pattern, q)
