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


async def test_a_store_child_killed_during_an_upload_loses_nothing_acknowledged(tmp_path, monkeypatch):
    """SIGKILL the child after the upload's first batch is written: the uploader hears it stopped part-way; once
    the child is back, the same upload again finishes it, with every paper once and the program untouched."""
    import json
    import threading

    from bot.app import library_commands
    from bot.harness import MANAGE_GUILD
    from bot.harness.payloads import GUILD_ID, Upload
    from retrieval.server_library import library_prefix
    from tests.fakes import HashEmbedder

    monkeypatch.setattr("ingest.store.RESTART_WAITS", (0.2,))
    monkeypatch.setattr("ingest.pipeline.EMBED_BATCH_PAPERS", 20)  # several batches: the kill falls between two
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "program.jsonl").write_text("\n".join(json.dumps(
        {"id": f"p{i}", "abstract": f"Program paper {i} studies graph networks for molecule {i} in depth."})
        for i in range(5)), encoding="utf-8")
    notes = "\n".join(json.dumps({"id": f"n{i}", "title": f"Note {i}",
                                  "abstract": f"Field note {i} measures sensor drift over {i} weeks of recordings."})
                      for i in range(200)).encode("utf-8")
    settings = make_settings(tmp_path, PAPERBOT_CORPUS=str(corpus), CHROMA_CHILD="1")
    library = await asyncio.to_thread(Library, settings, HashEmbedder(), True)
    killed = threading.Event()
    original = library_commands.UploadProgress.__call__

    def kill_part_way(self, done: int, total: int) -> None:
        original(self, done, total)
        child = library.store._child
        if 0 < done < total and not killed.is_set() and child is not None:
            killed.set()
            os.kill(child.pid, signal.SIGKILL)
            child._proc.wait(10)  # dead before the next write, as a crashed child is

    try:
        await asyncio.to_thread(library.ingest)
        async with Harness(PaperBot(Services(settings, library))) as h:
            monkeypatch.setattr(library_commands.UploadProgress, "__call__", kill_part_way)
            first = await h.slash("library add", file=Upload("notes.jsonl", notes), permissions=MANAGE_GUILD)
            assert killed.is_set()
            assert "stopped part-way" in first.messages[-1]["content"]
            await _served(library)
            monkeypatch.setattr(library_commands.UploadProgress, "__call__", original)
            again = await h.slash("library add", file=Upload("notes.jsonl", notes), permissions=MANAGE_GUILD)
            assert "is in this server's library" in again.messages[-1]["content"]
        papers = await asyncio.to_thread(library.papers)
        prefix = library_prefix(str(GUILD_ID))
        assert sorted(p.paper_id for p in papers if p.library) == sorted(f"{prefix}n{i}" for i in range(200))
        assert len([p for p in papers if not p.library]) == 5
        ids = await asyncio.to_thread(lambda: [c.chunk_id for c in library.store.iter_chunks(with_text=False)])
        assert len(ids) == len(set(ids))  # no chunk twice
    finally:
        await asyncio.to_thread(library.close)

