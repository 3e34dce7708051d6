"""Faults while the bot serves: the Chroma server goes away and comes back, the core is slow, the store is damaged."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import uuid

import pytest

from bot.app import replies as bot_messages
from bot.app.client import PaperBot
from bot.harness import Harness
from bot.runtime import Services
from ingest.store import Store
from retrieval.library import Library
from tests.bot.limits import assert_calls_ok
from tests.conftest import make_settings
from tests.fakes import HashEmbedder
from tests.integration import servers
from tests.reliability.helpers import generate_corpus

QUESTION = "replication study number 3"
DISCORD_ACK = 3.0  # seconds Discord waits for an interaction to be acknowledged


def final_text(ex) -> str:
    call = ex.sends[-1]
    return str(call.json)


@pytest.mark.slow
@pytest.mark.anyio
async def test_chroma_server_down_then_back_without_restarting_the_bot(tmp_path, monkeypatch):
    port = servers.free_port()
    monkeypatch.setattr(servers, "free_port", lambda: port)  # the restarted server comes back on the same port
    data = tmp_path / "server-data"
    server = servers.start_chroma(data)
    try:
        env = {**server.env, "CHROMA_COLLECTION": f"t-{uuid.uuid4().hex[:8]}", "CHROMA_TIMEOUT": "2",
               "DISCORD_RATE_LIMIT": "1000", "PAPERBOT_CORPUS": str(generate_corpus(tmp_path / "p.jsonl", 20))}
        settings = make_settings(tmp_path, **env)
        lib = Library(settings, embedder=HashEmbedder())
        await asyncio.to_thread(lib.ingest)
        async with Harness(PaperBot(Services(settings, lib))) as h:
            ok = await h.slash("ask", question=QUESTION)
            assert "[1]" in final_text(ok)

            server.stop()
            for how in ("slash", "dm"):
                start = time.monotonic()
                down = await (h.slash("ask", question=QUESTION) if how == "slash" else h.dm(QUESTION))
                assert time.monotonic() - start < 2 + 3
                assert bot_messages.STORE_UNAVAILABLE in final_text(down), how
                assert_calls_ok(down.calls)

            paused = servers.start_chroma(data)
            paused.proc.send_signal(__import__("signal").SIGSTOP)  # up but stuck: the timeout bounds the wait
            try:
                start = time.monotonic()
                stuck = await h.slash("ask", question=QUESTION)
                assert bot_messages.STORE_UNAVAILABLE in final_text(stuck)
                assert time.monotonic() - start < 2 * 2 + 3
            finally:
                paused.stop()

            server = servers.start_chroma(data)
            back = await h.slash("ask", question=QUESTION)
            assert "[1]" in final_text(back) and bot_messages.STORE_UNAVAILABLE not in final_text(back)
            assert_calls_ok(back.calls)
    finally:
        server.stop()


class SlowEmbedder(HashEmbedder):
    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay

    def encode(self, texts, batch_size=None):
        time.sleep(self.delay)
        return super().encode(texts, batch_size)


@pytest.mark.slow
@pytest.mark.anyio
async def test_slow_embedding_and_store_still_acknowledge_every_interaction_within_3_s(tmp_path, monkeypatch):
    settings = make_settings(tmp_path, DISCORD_RATE_LIMIT="1000", DISCORD_MAX_CONCURRENCY="1",
                             PAPERBOT_CORPUS=str(generate_corpus(tmp_path / "p.jsonl", 10)))
    embedder = SlowEmbedder(0.0)
    lib = Library(settings, embedder=embedder)
    await asyncio.to_thread(lib.ingest)
    async with Harness(PaperBot(Services(settings, lib))) as h:
        embedder.delay = 1.0
        slow_version = Store.content_version

        def slow(store):  # longer than Discord waits, on its own
            time.sleep(DISCORD_ACK + 0.5)
            return slow_version(store)

        monkeypatch.setattr(Store, "content_version", slow)
        payloads = [h.slash_payload("ask", question=f"{QUESTION} {i}") for i in range(2)]
        payloads += [h.slash_payload("search", query=QUESTION), h.slash_payload("about"),
                     h.slash_payload("ask", question=QUESTION, private=True)]
        exchanges = [h.feed_interaction(p) for p in payloads]  # all at once: they queue behind one worker
        await asyncio.gather(*(h.wait(ex, timeout=120) for ex in exchanges))
    for ex in exchanges:
        first = ex.calls[0]
        assert first.is_callback and first.callback_type in (4, 5), ex.name
        assert first.at - ex.started < DISCORD_ACK, f"{ex.name} acknowledged after {first.at - ex.started:.1f} s"
        assert len(ex.sends) >= 1
        assert_calls_ok(ex.calls)


@pytest.mark.slow
@pytest.mark.parametrize("command", [["search", "masking weights"], ["ingest"]])
def test_cli_on_a_damaged_store_says_how_to_rebuild_in_one_line(tmp_path, command):
    settings = make_settings(tmp_path, PAPERBOT_CORPUS=str(generate_corpus(tmp_path / "p.jsonl", 10)))
    with Library(settings, embedder=HashEmbedder()) as lib:
        lib.ingest()
    db = tmp_path / "chroma" / "chroma.sqlite3"
    db.write_bytes(os.urandom(db.stat().st_size))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHROMA_", "PAPERBOT_", "DISCORD_", "LLM_"))}
    env.update(CHROMA_PATH=str(tmp_path / "chroma"), PAPERBOT_CACHE_DIR=str(tmp_path / "cache"),
               PAPERBOT_ENV_FILE=str(tmp_path / "none.env"), PAPERBOT_CORPUS=str(tmp_path / "p.jsonl"),
               HF_HUB_OFFLINE="1")
    proc = subprocess.run([sys.executable, "-m", "bot.cli", *command], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=300)
    assert proc.returncode == 1
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith(f"paperbot: error: cannot open the store at {tmp_path / 'chroma'}")
    assert "move it aside and run `paperbot ingest` to rebuild it" in line
