"""A lone ingest keeps the embedded store's own threads on one core while it writes, and gives them back after."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from ingest.cores import on_one_core, threads_named
from ingest.store import Store, Writes
from paperbot.settings import Settings

LINUX_THREADS = hasattr(os, "sched_setaffinity") and Path("/proc/self/task").is_dir()
needs_two_cores = pytest.mark.skipif(not LINUX_THREADS or len(os.sched_getaffinity(0)) < 2,
                                     reason="pinning threads needs Linux and at least two cores")
PR_SET_NAME = 15


class NamedThread:
    """A thread with an OS-level name (what /proc shows, as Chroma's native threads have), parked until stopped;
    it can start a child thread of its own, which inherits its cores."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.tid = 0
        self._ready = threading.Event()
        self._stop = threading.Event()
        self._child_request = threading.Event()
        self.child: NamedThread | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        assert self._ready.wait(5)

    def _run(self) -> None:
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        libc.prctl(PR_SET_NAME, self.name.encode(), 0, 0, 0)
        self.tid = threading.get_native_id()
        self._ready.set()
        while not self._stop.wait(0.01):
            if self._child_request.is_set() and self.child is None:
                self.child = NamedThread(self.name + "c")

    def start_child(self) -> NamedThread:
        self._child_request.set()
        for _ in range(500):
            if self.child is not None:
                return self.child
            time.sleep(0.01)
        raise AssertionError("the child thread did not start")

    def stop(self) -> None:
        if self.child:
            self.child.stop()
        self._stop.set()
        self._thread.join(5)


def test_threads_named_reads_the_task_list_and_skips_threads_that_ended(tmp_path):
    for tid, name in [("101", "tokio-rt-worker"), ("102", "sqlx-sqlite-wor"), ("103", "python")]:
        (tmp_path / tid).mkdir()
        (tmp_path / tid / "comm").write_text(name + "\n")
    (tmp_path / "104").mkdir()  # ended between the listing and the read: no comm file any more
    assert sorted(threads_named(("tokio-", "sqlx-"), tmp_path)) == [101, 102]
    assert threads_named(("tokio-",), tmp_path / "missing") == []


@needs_two_cores
def test_named_threads_run_on_one_core_inside_and_on_all_after():
    allowed = os.sched_getaffinity(0)
    worker, other = NamedThread("tokio-test"), NamedThread("other-test")
    try:
        with on_one_core(("tokio-",)):
            assert os.sched_getaffinity(worker.tid) == {min(allowed)}
            assert os.sched_getaffinity(other.tid) == allowed  # a thread of another name is left alone
            assert os.sched_getaffinity(0) == allowed  # and so is the caller
            child = worker.start_child()  # a thread the pinned one starts meanwhile inherits its core
            assert os.sched_getaffinity(child.tid) == {min(allowed)}
        assert os.sched_getaffinity(worker.tid) == allowed
        assert os.sched_getaffinity(child.tid) == allowed
    finally:
        worker.stop()
        other.stop()


@needs_two_cores
def test_threads_go_back_when_the_write_fails():
    allowed = os.sched_getaffinity(0)
    worker = NamedThread("tokio-fail")
    try:
        with pytest.raises(RuntimeError), on_one_core(("tokio-",)):
            raise RuntimeError("write refused")
        assert os.sched_getaffinity(worker.tid) == allowed
    finally:
        worker.stop()


@needs_two_cores
def test_a_lone_store_write_pins_chromas_threads_only_while_it_writes(tmp_path, monkeypatch):
    """The store's own write loop, on a real embedded Chroma: its threads are on one core during each call."""
    allowed = os.sched_getaffinity(0)
    settings = Settings.from_env({"CHROMA_PATH": str(tmp_path / "store"), "PAPERBOT_CACHE_DIR": str(tmp_path)})
    store = Store(settings.store, "test-model", 4)
    seen: list[set[int]] = []
    try:
        real = store._collection.upsert

        def upsert(**kwargs):
            seen.extend(os.sched_getaffinity(tid) for tid in threads_named(("tokio-", "sqlx-")))
            return real(**kwargs)

        monkeypatch.setattr(store._collection, "upsert", upsert)
        store.writes = Writes.ALONE  # as `paperbot ingest` opens it
        store.upsert(["a", "b"], np.eye(2, 4, dtype=np.float32), [{"paper_id": "a"}, {"paper_id": "b"}])
        assert seen and all(cores == {min(allowed)} for cores in seen)
        assert all(os.sched_getaffinity(tid) == allowed for tid in threads_named(("tokio-", "sqlx-")))
        assert store._collection.count() == 2
        store.writes = Writes.SHARED  # a bot: its threads are left where they are
        seen.clear()
        store.upsert(["c"], np.eye(1, 4, dtype=np.float32), [{"paper_id": "c"}])
        assert seen and all(cores == allowed for cores in seen)
    finally:
        store.close()
