"""The bot's embedded store served from a child `chroma run` process (CHROMA_CHILD): same rows, same lock,
nothing left running after the bot, whichever way it ends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from ingest.chroma_child import LOG_NAME, ChromaChild, _child_env
from ingest.store import Store
from paperbot.errors import StoreUnavailableError
from paperbot.settings import Settings

REPO = Path(__file__).resolve().parents[2]

# Opens the store the way the bot does, prints the child's pid, then waits to be killed.
OPENER = """
import sys
from pathlib import Path
from ingest.store import Store
from paperbot.settings import StoreSettings

store = Store(StoreSettings(path=Path(sys.argv[1])), "fake-model", 4, child=True)
print(store._child._proc.pid, flush=True)
sys.stdin.read()
"""


def rows(n: int, start: int = 0) -> tuple[list[str], np.ndarray, list[dict]]:
    rng = np.random.default_rng(start)
    vectors = rng.standard_normal((n, 4)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return ([f"p{start + i}#0" for i in range(n)], vectors,
            [{"paper_id": f"p{start + i}", "embed_hash": f"h{start + i}"} for i in range(n)])


def gone(pid: int, within: float = 15.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_a_served_store_writes_what_an_in_process_store_reads_back():
    settings = Settings.from_env().store
    store = Store(settings, "fake-model", 4, child=True)
    pid = store._child._proc.pid
    try:
        assert not store.in_process
        assert store.max_batch() == 256  # over HTTP the GIL is free: no small calls, no pauses
        ids, vectors, metas = rows(300)
        store.upsert(ids, vectors, metas)
        store.bump_version()
        assert store.count() == 300
        assert store.query(vectors[7], 1)[0][0] == ids[7]
        other = subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; from ingest.store "
                                "import Store; from paperbot.settings import StoreSettings; "
                                "Store(StoreSettings(path=Path(sys.argv[1])), 'fake-model', 4)", str(settings.path)],
                               cwd=REPO, capture_output=True, text=True)
        assert other.returncode != 0 and "StoreLockedError" in other.stderr  # the bot keeps the lock meanwhile
    finally:
        store.close()
    assert gone(pid)
    with Store(settings, "fake-model", 4) as again:
        assert again.in_process
        assert again.count() == 300
        assert sorted(again.get_embeddings(ids[:3])) == ids[:3]


def _kill_after_first_line(script: str, path: Path) -> str:
    """Run `script` over the store at `path`, wait for the first line it prints, then SIGKILL it: that line."""
    proc = subprocess.Popen([sys.executable, "-c", script, str(path)], cwd=REPO, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = proc.stdout.readline().strip()
        assert line, proc.stderr.read()
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        return line
    finally:
        if proc.poll() is None:
            proc.kill()


def test_the_child_stops_when_the_bot_is_killed():
    line = _kill_after_first_line(OPENER, Path(Settings.from_env().store.path))
    assert line.isdigit()
    assert gone(int(line)), "the child kept serving the store after the bot was killed"
    with Store(Settings.from_env().store, "fake-model", 4) as store:  # the lock is free again
        assert store.count() == 0


def _wait_served(store: Store, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while store.child_state != "serving" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert store.child_state == "serving", "the store's child did not come back"


def test_a_child_killed_right_after_a_write_comes_back_with_every_acknowledged_row():
    from paperbot.errors import StoreRestartingError
    from ingest.store import PREVIOUS_LOG

    store = Store(Settings.from_env().store, "fake-model", 4, child=True)
    try:
        ids, vectors, metas = rows(300)
        store.upsert(ids, vectors, metas)  # acknowledged: it must survive what comes next
        first = store._child.pid
        os.kill(first, signal.SIGKILL)
        store._child._proc.wait(10)
        with pytest.raises(StoreRestartingError) as err:
            store.count()
        assert "being started again" in str(err.value) and PREVIOUS_LOG in str(err.value)
        _wait_served(store)
        assert store._child.pid != first and store.child_restarts == 1
        assert store.count() == 300
        assert store.query(vectors[7], 1)[0][0] == ids[7]
        assert (store.settings.path / PREVIOUS_LOG).exists()  # the dead child's output is kept
        more_ids, more_vectors, more_metas = rows(310)
        store.upsert(more_ids[300:], more_vectors[300:], more_metas[300:])  # and it takes writes again
        assert store.count() == 310
    finally:
        store.close()


def test_a_call_failing_while_the_killed_child_is_still_exiting_is_a_restart():
    """A call can fail before the killed child's process is gone: here the server is dead and the process the
    store watches exits 0.3 s later. The failure is still the store restarting (not a store error)."""
    from paperbot.errors import StoreRestartingError

    store = Store(Settings.from_env().store, "fake-model", 4, child=True)
    try:
        ids, vectors, metas = rows(20)
        store.upsert(ids, vectors, metas)
        first = store._child.pid
        os.kill(first, signal.SIGKILL)
        store._child._proc.wait(10)
        store._child._proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.3)"])
        with pytest.raises(StoreRestartingError):
            store.count()
        _wait_served(store)
        assert store._child.pid != first and store.count() == 20
    finally:
        store.close()


def test_a_child_killed_during_an_ingest_loses_no_paper_after_the_next_one(corpus_dir, embedder):
    """The ingest that was running fails with the store restarting; the next one finds every paper stored."""
    from ingest.pipeline import ingest
    from paperbot.errors import StoreRestartingError

    store = Store(Settings.from_env().store, embedder.name, embedder.dimension, child=True)
    try:
        killed = []

        def kill_once(done: int, total: int) -> None:
            if done and not killed:  # the first batch is written: the child dies before the next call
                killed.append(store._child.pid)
                os.kill(store._child.pid, signal.SIGKILL)
                store._child._proc.wait(10)

        with pytest.raises(StoreRestartingError):
            ingest([corpus_dir], store, embedder, progress=kill_once)
        assert killed
        _wait_served(store)
        summary = ingest([corpus_dir], store, embedder)
        stored = {c.paper_id for c in store.iter_chunks()}
        assert len(stored) == summary.added + summary.updated + summary.unchanged + summary.moved >= 50
        assert not store.write_in_progress()
    finally:
        store.close()


# Writes 300 rows into an in-process store, says so once the write returned, then waits to be killed.
WRITER = """
import sys
from pathlib import Path
import numpy as np
from ingest.store import Store
from paperbot.settings import StoreSettings

store = Store(StoreSettings(path=Path(sys.argv[1])), "fake-model", 4)
rng = np.random.default_rng(0)
vectors = rng.standard_normal((300, 4)).astype(np.float32)
store.upsert([f"p{i}#0" for i in range(300)], vectors, [{"paper_id": f"p{i}", "embed_hash": f"h{i}"} for i in range(300)])
print("written", flush=True)
sys.stdin.read()
"""


def test_an_embedded_store_killed_right_after_a_write_keeps_it():
    assert _kill_after_first_line(WRITER, Path(Settings.from_env().store.path)) == "written"
    with Store(Settings.from_env().store, "fake-model", 4) as store:
        assert store.count() == 300


def test_closing_the_store_stops_a_restart_in_progress(monkeypatch):
    monkeypatch.setattr("ingest.store.RESTART_WAITS", (30.0,))  # it would wait long before starting a child
    store = Store(Settings.from_env().store, "fake-model", 4, child=True)
    pid = store._child.pid
    os.kill(pid, signal.SIGKILL)
    store._child._proc.wait(10)
    with pytest.raises(StoreUnavailableError):
        store.count()
    assert store.child_state == "restarting"
    started = time.monotonic()
    store.close()
    assert time.monotonic() - started < 5 and not store._restarter.is_alive()


def test_a_child_that_cannot_start_says_why_and_leaves_the_store_unlocked(tmp_path, monkeypatch):
    monkeypatch.setattr("ingest.chroma_child.CHILD", "import sys; print('no server here'); sys.exit(3)")
    settings = Settings.from_env().store
    with pytest.raises(Exception) as err:
        Store(settings, "fake-model", 4, child=True)
    message = str(err.value)
    assert "exited with code 3" in message and "no server here" in message and "CHROMA_CHILD=0" in message
    with Store(settings, "fake-model", 4) as store:
        assert store.in_process


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="finds the child's process in Linux's /proc")
def test_a_child_that_never_answers_is_stopped_and_reported(tmp_path, monkeypatch):
    monkeypatch.setattr("ingest.chroma_child.CHILD", "import time; print('stuck', flush=True); time.sleep(60)")
    monkeypatch.setattr("ingest.chroma_child.START_TIMEOUT", 1.0)
    monkeypatch.setattr("ingest.chroma_child.STOP_TIMEOUT", 0.5)  # it ignores its stdin: killed
    started = time.monotonic()
    with pytest.raises(Exception) as err:
        ChromaChild(tmp_path)
    assert time.monotonic() - started < 10
    assert "did not answer within 1 s" in str(err.value) and str(tmp_path / LOG_NAME) in str(err.value)
    assert not child_pids_running(tmp_path)


def child_pids_running(path: Path) -> list[int]:
    """Processes whose command line names `path` (the child's arguments do)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if str(path).encode() in cmdline.read_bytes():
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found


def test_the_child_does_not_see_the_bots_secrets(monkeypatch):
    monkeypatch.setenv("DISCORD_TOKEN", "secret-discord")
    monkeypatch.setenv("LLM_API_KEY", "secret-llm")
    monkeypatch.setenv("CHROMA_AUTH_TOKEN", "secret-chroma")
    monkeypatch.setenv("HF_TOKEN", "secret-hf")
    env = _child_env()
    assert not [v for v in env.values() if v.startswith("secret-")]
    assert env["PATH"] == os.environ["PATH"] and env["NO_COLOR"] == "1"


def test_chroma_child_off_keeps_the_bots_store_in_process(monkeypatch, embedder):
    from retrieval.library import Library

    monkeypatch.setenv("CHROMA_CHILD", "0")
    with Library(Settings.from_env(), embedder=embedder, serving=True) as library:
        assert library.store.in_process
    monkeypatch.setenv("CHROMA_CHILD", "1")
    with Library(Settings.from_env(), embedder=embedder, serving=True) as library:
        assert not library.store.in_process
    with Library(Settings.from_env(), embedder=embedder) as library:  # the CLI's commands: in their process
        assert library.store.in_process


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads the listening sockets from Linux's /proc")
def test_the_child_listens_on_loopback_only(tmp_path):
    child = ChromaChild(tmp_path)
    try:
        listening = []  # the sockets listening on the child's port, from the kernel's tables
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            if Path(table).exists():
                for line in Path(table).read_text().splitlines()[1:]:
                    local, state = line.split()[1], line.split()[3]
                    address, port = local.split(":")
                    if state == "0A" and int(port, 16) == child.port:
                        listening.append(address)
        assert listening == ["0100007F"]  # 127.0.0.1, and no other address
    finally:
        child.stop()
    assert not child.alive()
