"""Real replies of small models (llama.cpp's llama-server), replayed from the loopback server.

tests/data/llm_recordings/*.jsonl hold what SmolLM2-135M-Instruct and
Gemma-3-270M answered to paperbot's own prompts (raw JSON or raw SSE lines);
labels.jsonl says, per answer, whether it is good or garbage, and per rewrite
whether it is a usable search query. Each reply goes through the real client
(parsing the recorded bytes) and the real check (`judge_reply`, `rewrite_query`).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from benchmarks.llm_grounding import passages_of
from retrieval.llm import LLMClient
from retrieval.qa import judge_reply, rewrite_query
from tests.llm_server import Endpoint, Reply
from tests.retrieval.test_llm import llm_settings

RECORDINGS = Path(__file__).resolve().parent.parent / "data" / "llm_recordings"
LABELS = RECORDINGS / "labels.jsonl"


def labelled() -> list[tuple[str, dict, dict]]:
    if not LABELS.exists():
        return []
    labels = {}
    for line in LABELS.read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            labels[item["key"]] = item
    out = []
    for path in sorted(RECORDINGS.glob("*.jsonl")):
        if path.name == LABELS.name:
            continue
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            key = f"{path.name}:{i}"
            if line.strip() and key in labels:
                out.append((key, json.loads(line), labels[key]))
    return out


CASES = labelled()
pytestmark = pytest.mark.skipif(not CASES, reason="no labelled recordings in tests/data/llm_recordings")


@pytest.fixture(scope="module")
def endpoint():
    """One loopback server for every recording of the module (each test enqueues the bytes it replays)."""
    with Endpoint() as server:
        yield server


def replay(endpoint: Endpoint, record: dict, call):
    """`call(llm)` against the loopback server, answering with `record`'s recorded bytes."""
    endpoint.enqueue(Reply.recorded(record))

    async def go():
        async with httpx.AsyncClient() as http:
            return await call(LLMClient(llm_settings(endpoint, stream=bool(record.get("sse"))), http))

    return asyncio.run(go())


@pytest.fixture(scope="module")
def embed(embedder):
    return embedder


def test_recorded_answers_garbage_is_never_shown(embed, endpoint):
    """Every recorded answer of the two weak models is labelled garbage (echoes, loops, template debris,
    mis-citations); none may be shown. Good answers are checked on the capable-model set instead
    (tests/retrieval/test_checked_stream.py)."""
    shown_garbage, checked = [], 0
    for key, record, label in CASES:
        if record.get("kind") != "answer" or label["label"] != "garbage":
            continue
        checked += 1
        completion = replay(endpoint, record, lambda llm: llm.chat(record["messages"]))
        verdict = judge_reply(completion.text, passages_of(record), embed, question=record["question"],
                              finish_reason=completion.finish_reason)
        if verdict.text:
            shown_garbage.append((key, verdict.text[:120]))
    assert checked >= 50, f"only {checked} recorded garbage answers were replayed"
    assert shown_garbage == []


def test_recorded_rewrites_that_are_no_query_are_refused(endpoint):
    for key, record, label in CASES:
        if record.get("kind") != "rewrite":
            continue
        query = replay(endpoint, record, lambda llm: rewrite_query(llm, record["question"]))
        assert bool(query) is (label["label"] == "good"), (key, query)
