"""Two bot processes, shards 0 and 1 of 2, against one Chroma server and one PostgreSQL (a real one of each): what
one saves the other lists, a watch's digest is sent once, and a process killed with SIGKILL loses nothing it
acknowledged. Each process is tests/integration/shard_worker.py driven through the harness."""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from benchmarks import shapes
from paperbot.settings import Settings, default_cache_dir
from retrieval.library import Library

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
REPLY_TIMEOUT = 180.0  # seconds: the first reply waits for the model to load


class Worker:
    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        environ = {k: v for k, v in os.environ.items()
                   if not k.startswith(("CHROMA_", "PAPERBOT_", "EMBEDDING_", "DISCORD_"))}
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.integration.shard_worker"], cwd=cwd,
                                     env={**environ, **env, "PYTHONPATH": str(REPO), "PAPERBOT_ENV_FILE": "none"},
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        assert self._reply() == {"ready": True}

    def _reply(self) -> dict:
        assert self.proc.stdout is not None
        with selectors.DefaultSelector() as waiting:  # epoll: select() refuses descriptors past 1024
            waiting.register(self.proc.stdout, selectors.EVENT_READ)
            ready = waiting.select(REPLY_TIMEOUT)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            self.proc.kill()
            raise AssertionError(f"the worker gave no reply: {self.proc.stderr.read()[-3000:] if self.proc.stderr else ''}")
        return json.loads(line)

    def send(self, command: dict) -> dict:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()
        return self._reply()

    def stop(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)


def program(only: set[int] | None = None) -> dict:
    out = shapes.week_program()
    out["results"] = [e for e in out["results"] if only is None or e["id"] in only]
    return out


def test_two_shard_processes_share_saved_papers_and_send_each_digest_once(chroma_server, postgres, embedder,
                                                                         tmp_path):
    env = {**chroma_server.env, "CHROMA_COLLECTION": f"s-{uuid.uuid4().hex[:12]}", "CHROMA_TIMEOUT": "10",
           "PAPERBOT_CACHE_DIR": str(tmp_path / "cache"), "EMBEDDING_CACHE_DIR": str(default_cache_dir()),
           "CHROMA_PATH": str(tmp_path / "unused"), "PAPERBOT_USER_DB": postgres.new_database(),
           "DISCORD_SHARDS": "2"}
    path = shapes.write_json(tmp_path / "corpus" / "program.json", program({201, 204}))
    with Library(Settings.from_env(env), embedder=embedder) as lib:
        lib.ingest([path])
        shard0 = Worker({**env, "DISCORD_SHARD_IDS": "0", "PAPERBOT_LOG_DIR": str(tmp_path / "log0")}, tmp_path)
        shard1 = Worker({**env, "DISCORD_SHARD_IDS": "1", "PAPERBOT_LOG_DIR": str(tmp_path / "log1")}, tmp_path)
        try:
            assert shard0.send({"shards": True}) == {"sharded": True, "count": 2, "ids": [0]}
            assert shard1.send({"shards": True}) == {"sharded": True, "count": 2, "ids": [1]}

            shown = shard0.send({"slash": "paper", "options": {"paper": "201"}})
            saved = shard0.send({"click": "Save"})
            listed = shard1.send({"slash": "saved list"})
            watching = shard1.send({"slash": "watch add", "options": {"topic": "preference optimization"}})
            quiet = [shard0.send({"watch": True}), shard1.send({"watch": True})]  # nothing new yet

            shapes.write_json(path, program())  # the program gains its other papers
            lib.ingest([path])
            fired = [shard0.send({"watch": True}), shard1.send({"watch": True})]
            again = [shard0.send({"watch": True}), shard1.send({"watch": True})]

            shard1.send({"slash": "paper", "options": {"paper": "204"}})
            acknowledged = shard1.send({"click": "Save"})
            shard1.proc.send_signal(signal.SIGKILL)  # right after the reply: nothing is left to flush
            shard1.proc.wait(timeout=30)
            after = shard0.send({"slash": "saved list"})
        finally:
            shard0.stop()
            shard1.stop()
    assert "Save" in shown["buttons"] and "Saved 1 of 1 paper; your list has 1." in saved["text"]
    title = shapes.week_program()["results"][0]["name"]
    assert title in listed["text"]  # saved in shard 0's process, listed by shard 1's
    assert "Watching" in watching["text"] and [q["sent"] for q in quiet] == [0, 0]
    assert sorted(f["sent"] for f in fired) == [0, 1]  # one digest, from one of the two processes
    digest = next(f["text"] for f in fired if f["sent"])
    assert "New papers for your watch: preference optimization" in digest
    assert [a["sent"] for a in again] == [0, 0]
    assert "your list has 2" in acknowledged["text"]
    assert title in after["text"] and "Sparse Attention for Long Protein Sequences" in after["text"]
