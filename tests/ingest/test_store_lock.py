"""Embedded mode serves one process: a second one is turned away at once with a message, not a hang."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ingest.store import Store
from paperbot.errors import StoreLockedError
from paperbot.settings import Settings

REPO = Path(__file__).resolve().parents[2]

# Holds the embedded store open without loading a model: the lock is all that matters here.
HOLDER = """
import sys
from pathlib import Path
from ingest.store import Store
from paperbot.settings import StoreSettings

store = Store(StoreSettings(path=Path(sys.argv[1])), "fake-model", 4)
print("holding", flush=True)
sys.stdin.read()
store.close()
"""


@pytest.fixture
def holder(tmp_path):
    """Another process that has the embedded store at CHROMA_PATH open."""
    path = Path(os.environ["CHROMA_PATH"])
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], cwd=REPO, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = proc.stdout.readline()
    if line.strip() != "holding":
        proc.kill()
        pytest.fail(f"the lock holder did not start: {proc.stderr.read()}")
    yield proc
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=10)


def test_second_store_in_another_process_is_refused_at_once(holder):
    settings = Settings.from_env().store
    start = time.monotonic()
    with pytest.raises(StoreLockedError) as err:
        Store(settings, "fake-model", 4)
    assert time.monotonic() - start < 5
    message = str(err.value)
    assert str(settings.path) in message
    assert "in use by another paperbot process" in message
    assert "chroma run --path" in message and "CHROMA_HOST" in message


def test_lock_is_released_when_the_holder_dies(holder):
    settings = Settings.from_env().store
    holder.kill()
    holder.wait(timeout=10)
    with Store(settings, "fake-model", 4) as store:
        assert store.count() == 0


def test_lock_is_released_on_close(holder):
    settings = Settings.from_env().store
    holder.stdin.close()  # the holder closes its store and exits
    assert holder.wait(timeout=30) == 0
    with Store(settings, "fake-model", 4) as store:
        assert store.count() == 0
        with pytest.raises(StoreLockedError):  # the lock is per store, even within one process
            Store(settings, "fake-model", 4)


@pytest.mark.slow
@pytest.mark.parametrize("command", [["search", "graph neural networks"], ["ingest"]])
def test_cli_on_a_locked_store_says_to_run_a_chroma_server(holder, command, tmp_path):
    path = os.environ["CHROMA_PATH"]
    done = subprocess.run([sys.executable, "-m", "bot.cli", *command], cwd=tmp_path, env=dict(os.environ),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith(f"paperbot: error: the store at {path} is in use by another paperbot process")
    assert "run a Chroma server (`chroma run --path DIR`) and set CHROMA_HOST" in lines[-1]
    assert "Traceback" not in done.stderr
    assert holder.poll() is None  # the holder was not disturbed


@pytest.mark.parametrize("writes", ["alone", "shared"])
def test_writes_go_to_chroma_in_small_calls(tmp_path, writes):
    """Chroma's embedded client holds the GIL through a whole write: a bot's event loop waits for each call.
    In a serving process the calls are smaller still."""
    import numpy as np

    from ingest import store as store_module
    from ingest.store import Store
    from tests.conftest import make_settings

    with Store(make_settings(tmp_path).store, "test-hash", 8, writes=store_module.Writes(writes)) as store:
        sizes = []
        real = store._collection.upsert

        def upsert(**kw):
            sizes.append(len(kw["ids"]))
            return real(**kw)

        store._collection.upsert = upsert
        batch = store_module.WRITE_BATCH if writes == "alone" else store_module.SHARED_WRITE_BATCH
        assert store_module.SHARED_WRITE_BATCH < store_module.WRITE_BATCH
        n = batch * 2 + 5
        store.upsert([f"p{i}:h:0" for i in range(n)], np.ones((n, 8), dtype=np.float32),
                     [{"paper_id": f"p{i}"} for i in range(n)])
        assert sizes == [batch, batch, 5]
        assert store.count() == n
        store.delete([f"p{i}:h:0" for i in range(n)])
        assert store.count() == 0 and store.query(np.ones(8, dtype=np.float32), n=10) == []


def test_no_temp_dir_is_noticed(monkeypatch, tmp_path):
    """A read-only root file system without a tmpfs: the store error asks for one instead of a rebuild."""
    import tempfile

    from ingest.store import no_temp_dir

    assert not no_temp_dir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing"))
    assert no_temp_dir()


def test_writes_pause_between_calls_only_in_a_serving_process(tmp_path, monkeypatch):
    """The pause between write calls lets a bot's event loop take the GIL; `paperbot ingest` alone skips it."""
    import numpy as np

    from ingest import store as store_module
    from ingest.store import Store
    from tests.conftest import make_settings

    pauses = []
    monkeypatch.setattr(store_module.time, "sleep", lambda s: pauses.append(s))
    n = store_module.WRITE_BATCH * 3
    with Store(make_settings(tmp_path).store, "test-hash", 8) as store:
        def write(prefix: str) -> None:
            store.upsert([f"{prefix}{i}:h:0" for i in range(n)], np.ones((n, 8), dtype=np.float32),
                         [{"paper_id": f"{prefix}{i}"} for i in range(n)])

        store.writes = store_module.Writes.ALONE
        write("a")
        assert pauses == []
        store.writes = store_module.Writes.SHARED
        write("b")  # in smaller calls, paused between
        calls = -(-n // store_module.SHARED_WRITE_BATCH)
        assert pauses == [store_module.WRITE_PAUSE] * (calls - 1)
        assert store.count() == 2 * n


def _log_entries(path: Path) -> dict[str, int]:
    """Entries in the embedded store's write-ahead log, per collection topic (read from its SQLite file)."""
    import sqlite3

    con = sqlite3.connect(f"file:{path / 'chroma.sqlite3'}?mode=ro", uri=True)
    try:
        return dict(con.execute("SELECT topic, COUNT(*) FROM embeddings_queue GROUP BY topic").fetchall())
    finally:
        con.close()


def _sync_threshold(path: Path, name: str) -> int:
    import chromadb

    from ingest.store import _chroma_settings

    client = chromadb.PersistentClient(path=str(path), settings=_chroma_settings())
    return client.get_collection(name, embedding_function=None).configuration["hnsw"]["sync_threshold"]


def test_the_write_log_stays_short_in_both_collections(tmp_path, monkeypatch):
    """Chroma reads its whole log back on every write call; the store keeps it at most LOG_ENTRIES long
    (plus one call's rows) instead of Chroma's 1,000, chunks and sentence vectors alike."""
    import threading

    import numpy as np

    from ingest import store as store_module
    from tests.conftest import make_settings

    settings = make_settings(tmp_path).store
    # the default policy, a serving process's (ingest.store.Writes.SHARED): small calls
    monkeypatch.setattr(store_module, "WRITE_PAUSE", 0)
    n = store_module.LOG_ENTRIES * 3
    with Store(settings, "test-hash", 8) as store:
        store.upsert([f"p{i}:h:0" for i in range(n)], np.ones((n, 8), dtype=np.float32),
                     [{"paper_id": f"p{i}"} for i in range(n)])
        store.snippets.upsert([(f"p{i}", f"{i:016x}", [(0, 5)], np.ones((1, 8))) for i in range(n)])
        assert store.count() == n and store.snippets.count() == n
    entries = _log_entries(settings.path)
    assert len(entries) == 2
    assert all(0 < k <= store_module.LOG_ENTRIES + store_module.SHARED_WRITE_BATCH for k in entries.values()), entries


def test_a_store_with_chromas_default_log_is_shortened_by_its_next_writer_only(tmp_path):
    """A store made before keeps Chroma's 1,000-entry log until an ingest opens it; a reader changes nothing."""
    import chromadb

    from ingest import store as store_module
    from ingest.store import _chroma_settings
    from tests.conftest import make_settings

    settings = make_settings(tmp_path).store
    client = chromadb.PersistentClient(path=str(settings.path), settings=_chroma_settings())
    for name in (settings.collection, settings.collection + "-snippets"):
        client.create_collection(name, embedding_function=None, metadata={
            "hnsw:space": "cosine", "embedding_model": "test-hash", "embedding_dimension": 8, "schema_version": 2})
        assert _sync_threshold(settings.path, name) == 1000
    with Store(settings, "test-hash", 8, create=False) as store:
        assert store.count() == 0
    assert _sync_threshold(settings.path, settings.collection) == 1000
    with Store(settings, "test-hash", 8):
        pass
    assert _sync_threshold(settings.path, settings.collection) == store_module.LOG_ENTRIES
    assert _sync_threshold(settings.path, settings.collection + "-snippets") == store_module.LOG_ENTRIES
