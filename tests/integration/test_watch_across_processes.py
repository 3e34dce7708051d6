"""A watch fires after a `paperbot ingest` in another process (a Chroma server, as a deployment runs it)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from benchmarks import shapes
from bot.app.client import PaperBot
from bot.harness import Harness
from bot.runtime import Services
from paperbot.settings import Settings, default_cache_dir
from retrieval.library import Library
from tests.bot.limits import assert_calls_ok

pytestmark = [pytest.mark.slow, pytest.mark.anyio]
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def anyio_backend():
    return "asyncio"


def program(only: set[int] | None = None) -> dict:
    out = shapes.week_program()
    out["results"] = [e for e in out["results"] if only is None or e["id"] in only]
    return out


async def test_a_watch_fires_after_an_ingest_in_another_process(chroma_server, embedder, tmp_path):
    env = {**chroma_server.env, "CHROMA_COLLECTION": f"w-{uuid.uuid4().hex[:12]}", "CHROMA_TIMEOUT": "10",
           "PAPERBOT_CACHE_DIR": str(tmp_path / "cache"), "EMBEDDING_CACHE_DIR": str(default_cache_dir()),
           "CHROMA_PATH": str(tmp_path / "unused"), "PAPERBOT_USER_DB": str(tmp_path / "users.sqlite3")}
    path = shapes.write_json(tmp_path / "corpus" / "program.json", program({204, 205}))
    settings = Settings.from_env(env)
    with Library(settings, embedder=embedder) as lib:
        lib.ingest([path])
        bot = PaperBot(Services(settings, lib))
        async with Harness(bot) as h:
            added = await h.slash("watch add", topic="preference optimization")
            nothing = await h.background(bot.watcher.run_once())  # no ingest yet: no digest
            shapes.write_json(path, program())  # the program gains six papers, ingested by another process
            environ = {k: v for k, v in os.environ.items() if not k.startswith(("CHROMA_", "PAPERBOT_", "EMBEDDING_"))}
            proc = subprocess.run([sys.executable, "-m", "bot.cli", "ingest", str(path)], cwd=tmp_path,
                                  env={**environ, **env, "PYTHONPATH": str(REPO), "PAPERBOT_ENV_FILE": "none"},
                                  capture_output=True, text=True, timeout=600)
            assert proc.returncode == 0, proc.stderr
            assert "6 added" in proc.stdout
            fired = await h.background(bot.watcher.run_once())
            again = await h.background(bot.watcher.run_once())
    assert "Watching" in added.messages[-1]["content"]
    assert not nothing.messages and not again.messages
    [digest] = fired.messages
    assert "guild_id" not in digest  # a direct message
    embed = digest["embeds"][0]
    assert embed["title"] == "New papers for your watch: preference optimization"
    assert "Direct Preference Optimization Without a Reference Model" in embed["description"]
    assert "Weather" not in embed["description"] and "Protein" not in embed["description"]
    assert embed["description"].count("**") // 2 <= 10
    assert_calls_ok(fired.calls)
    print("\n--- digest ---\n" + fired.text())
