"""SIGKILL a real `paperbot ingest` part-way; the next run finishes the job with exactly one copy of each chunk."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter

import pytest

from ingest.parse import parse_file
from ingest.pipeline import EMBED_BATCH_PAPERS, paper_chunks
from ingest.store import Store
from paperbot.settings import default_cache_dir
from retrieval.library import Library
from tests.conftest import make_settings
from tests.reliability.helpers import generate_corpus

pytestmark = pytest.mark.slow

N_PAPERS = 100  # one batch of EMBED_BATCH_PAPERS written before the kill, the rest in flight


def cli_env(tmp_path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CHROMA_", "EMBEDDING_", "DISCORD_", "LLM_", "PAPERBOT_", "RETRIEVAL_"))}
    env.update(CHROMA_PATH=str(tmp_path / "chroma"), PAPERBOT_CACHE_DIR=str(tmp_path / "cache"),
               EMBEDDING_CACHE_DIR=str(default_cache_dir()), PAPERBOT_ENV_FILE=str(tmp_path / "none.env"),
               HF_HUB_OFFLINE="1")
    return env


def kill_after_first_batches(cmd, env, cwd, at_least: int, total: int, timeout: float = 300) -> int:
    """Run `cmd`, SIGKILL it once its progress bar shows `at_least` (but not all) papers written."""
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seen = {"done": 0}

    def watch():
        buf = b""
        while chunk := proc.stderr.read1(4096):
            buf = (buf + chunk)[-4096:]
            for done, of in re.findall(rb"(\d+)/(\d+) \[", buf):
                if int(of) == total:
                    seen["done"] = max(seen["done"], int(done))

    reader = threading.Thread(target=watch, daemon=True)
    reader.start()
    deadline = time.monotonic() + timeout
    while seen["done"] < at_least:
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"ingest ended or stalled before writing {at_least} papers (exit {proc.returncode})")
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    reader.join(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    return seen["done"]


def test_killed_ingest_is_finished_by_the_next_run(tmp_path, embedder):
    corpus = generate_corpus(tmp_path / "papers.jsonl", N_PAPERS)
    papers = parse_file(corpus)
    expected = {cid for p in papers for cid, *_ in paper_chunks(p, embedder)}
    cmd = [sys.executable, "-m", "bot.cli", "ingest", str(corpus)]
    env = cli_env(tmp_path)

    written = kill_after_first_batches(cmd, env, tmp_path, at_least=EMBED_BATCH_PAPERS, total=N_PAPERS)
    assert EMBED_BATCH_PAPERS <= written < N_PAPERS

    rerun = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    added, updated, unchanged = (int(re.search(rf"(\d+) {word}", rerun.stdout).group(1))
                                 for word in ("added", "updated", "unchanged"))
    # Resumed, not restarted; a paper whose write the kill cut short is embedded again (an update).
    assert added + updated + unchanged == N_PAPERS and unchanged >= written and updated <= 1

    settings = make_settings(tmp_path)
    with Store(settings.store, embedder.name, embedder.dimension) as store:
        stored = [r for r in store.iter_chunks(with_text=False)]
        assert store.count() == len(expected)
    ids = [r.chunk_id for r in stored]
    assert set(ids) == expected and len(ids) == len(set(ids))
    per_paper = Counter((r.paper_id, r.index) for r in stored)
    assert max(per_paper.values()) == 1  # one copy of every chunk
    assert len({r.paper_id for r in stored}) == N_PAPERS

    with Library(settings, embedder=embedder) as lib:
        last = papers[-1]
        result = lib.search(last.abstract.split(". ")[1], k=3)
        assert not result.abstained
        assert any(h.paper_id.startswith("gen") for h in result.hits)
        assert lib.stats().papers == N_PAPERS
