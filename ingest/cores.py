"""Keeping a library's own threads on one core for a while (Linux only; elsewhere nothing happens).

Chroma's embedded store does its work in threads of its own (tokio's runtime and SQLite's
worker), handing every statement from one to the other. On two cores each hand-off can be a
wake-up on the other core: a lone ingest's writes took 17 % less time with those threads kept
on one core (docs/benchmarks.md, "The ingest pipeline against the model alone").
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

log = logging.getLogger(__name__)

TASKS = Path("/proc/self/task")
# The names Chroma's embedded store gives its threads (Linux cuts a name to 15 characters).
CHROMA_THREADS = ("tokio-", "sqlx-")
# False leaves every thread where it is (benchmarks/pipeline_ratio.py --compare-unpinned measures what it saves).
ENABLED = True


def threads_named(prefixes: tuple[str, ...], tasks: Path = TASKS) -> list[int]:
    """The ids of this process's threads whose names start with one of `prefixes`."""
    found = []
    try:
        entries = list(tasks.iterdir())
    except OSError:
        return []
    for entry in entries:
        try:
            name = (entry / "comm").read_text().strip()
        except OSError:  # the thread ended meanwhile
            continue
        if name.startswith(prefixes) and entry.name.isdigit():
            found.append(int(entry.name))
    return found


@contextmanager
def on_one_core(prefixes: tuple[str, ...] = CHROMA_THREADS) -> Iterator[None]:
    """Inside, the threads named `prefixes` (and the threads they start meanwhile) run on one of the cores this
    process may use; after, on all of them again. Nothing happens where threads cannot be pinned, or with one
    core."""
    if not ENABLED or not hasattr(os, "sched_setaffinity"):
        yield
        return
    allowed = os.sched_getaffinity(0)
    if len(allowed) < 2:
        yield
        return
    core = {min(allowed)}
    for tid in threads_named(prefixes):
        _pin(tid, core)
    try:
        yield
    finally:
        for tid in threads_named(prefixes):
            _pin(tid, allowed)


def _pin(tid: int, cores: set[int]) -> None:
    try:
        os.sched_setaffinity(tid, cores)
    except OSError:  # the thread ended, or the system refuses: the write just runs as it would have
        log.debug("could not move thread %d to cores %s", tid, sorted(cores), exc_info=True)
