"""The bot's store child (ingest/chroma_child.py) comes back after it dies: meanwhile the bot says the library is
restarting; after, it answers from every paper; the heartbeat tells."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest

from bot.app import replies as bot_messages
from bot.app.client import PaperBot
from bot.app.lifecycle import Heartbeat
from bot.harness import Harness
from bot.health import read_beat
from bot.runtime import Services
from retrieval.library import Library
from tests.bot.limits import visible_text
from tests.conftest import make_settings, seed_store

pytestmark = pytest.mark.anyio

QUESTION = "how do people fine-tune by masking weights?"


async def _served(library: Library, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while library.store_child()[0] != "serving" and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert library.store_child() == ("serving", 1)


async def test_a_dead_store_child_is_started_again_and_the_bot_says_so_meanwhile(
        tmp_path, embedder, corpus_dir, bundled_store, monkeypatch):
    monkeypatch.setattr("ingest.store.RESTART_WAITS", (1.0,))  # long enough to ask while it is down
    seed_store(bundled_store, tmp_path)
    settings = make_settings(tmp_path, PAPERBOT_CORPUS=str(corpus_dir), CHROMA_CHILD="1")
    library = await asyncio.to_thread(Library, settings, embedder, True)
    try:
        before = len(await asyncio.to_thread(library.papers))
        heartbeat = Heartbeat(tmp_path / "heartbeat.json", 1.0)
        async with Harness(PaperBot(Services(settings, library))) as h:
            heartbeat.bot = h.bot
            child = library.store._child
            assert child is not None and library.store_child() == ("serving", 0)
            os.kill(child.pid, signal.SIGKILL)
            await asyncio.to_thread(child._proc.wait, 10)

            down = await h.slash("ask", question=QUESTION)
            assert bot_messages.STORE_RESTARTING in visible_text(down.calls[-1].json)
            heartbeat.beat()
            assert read_beat(heartbeat.path).store == "restarting"

            await _served(library)
            up = await h.slash("ask", question=QUESTION)
            assert "BMT" in visible_text(up.calls[-1].json)
            heartbeat.beat()
            beat = read_beat(heartbeat.path)
            assert (beat.store, beat.store_restarts) == ("serving", 1)
        assert len(await asyncio.to_thread(library.papers)) == before
    finally:
        await asyncio.to_thread(library.close)
