"""A `chroma run` server SIGKILLed right after a write returned comes back with every acknowledged row: below
Chroma's sync threshold (chroma-core/chroma #6975: such writes were listed lost after a crash) and past ~1,000
records (#7090: an index that failed after a server restart)."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

from ingest.store import Store
from paperbot.settings import Settings

from .servers import start_chroma

DIM = 4


def rows(n: int, start: int = 0) -> tuple[list[str], np.ndarray, list[dict]]:
    rng = np.random.default_rng(start)
    vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return ([f"p{start + i}#0" for i in range(n)], vectors,
            [{"paper_id": f"p{start + i}", "embed_hash": f"h{start + i}"} for i in range(n)])


def served(server) -> Store:
    return Store(Settings.from_env({**os.environ, **server.env}).store, "fake-model", DIM)


@pytest.mark.parametrize("n", [300, 1300], ids=["below the sync threshold", "past 1,000 records"])
def test_a_server_killed_right_after_a_write_keeps_every_acknowledged_row(tmp_path, n):
    data = tmp_path / "data"
    server = start_chroma(data)
    try:
        ids, vectors, metas = rows(n)
        with served(server) as store:
            store.upsert(ids, vectors, metas)  # returned: acknowledged
        server.proc.send_signal(signal.SIGKILL)
        server.proc.wait(15)
    finally:
        server.stop()
    again = start_chroma(data)  # the same folder, a new process (and port)
    try:
        with served(again) as store:
            assert store.count() == n
            for i in (0, n // 2, n - 1):
                assert store.query(vectors[i], 1)[0][0] == ids[i]
            more_ids, more_vectors, more_metas = rows(50, start=n)
            store.upsert(more_ids, more_vectors, more_metas)  # and it keeps taking writes
            assert store.count() == n + 50
    finally:
        again.stop()
