"""Keeping a long-running process's memory flat (glibc; elsewhere these do nothing).

glibc serves a large block (128 KB and more at first) from its own mapping and gives it back
when freed, but each such free raises that threshold, up to 32 MB. After a few, the per-query
arrays (one score per chunk: 224 KB at 56,000 chunks) are carved from the heap instead, which
grows in steps and keeps its pages. In a 20-minute soak on 6,000 papers the bot's RSS grew
7.8 % after warm-up with glibc's default and 2.6 % with the threshold fixed
(benchmarks/conference_bench.py, docs/benchmarks.md).
"""

from __future__ import annotations

import ctypes
import gc
import logging
from functools import lru_cache

log = logging.getLogger(__name__)

M_MMAP_THRESHOLD = -3  # mallopt parameter (malloc.h)
MMAP_THRESHOLD = 128 * 1024  # glibc's initial value, kept fixed


@lru_cache(maxsize=1)
def _libc():
    try:
        libc = ctypes.CDLL("libc.so.6")
        return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None
    except OSError:  # not glibc
        return None


def steady_heap() -> bool:
    """Keep large blocks in their own mappings for the life of the process; True when applied."""
    libc = _libc()
    if libc is None:
        return False
    applied = bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))
    log.debug("fixed malloc's mmap threshold at %d bytes: %s", MMAP_THRESHOLD, applied)
    return applied


def settle_long_lived() -> int:
    """Leave every object alive now (modules, the model, the serving view) out of the garbage collector's
    full passes (gc.freeze); returns how many there are.

    A full pass walks every tracked object while holding the interpreter: with half a million objects
    after warm-up, one took about 210 ms, and the records a /reindex parses set one off, stalling a bot's
    event loop for that long (docs/benchmarks.md, "The event loop during a /reindex"). Frozen objects are
    still freed when their last reference goes; only cycles among them are never collected, and the
    objects of a warmed-up process are meant to live as long as it does.
    """
    gc.freeze()
    return gc.get_freeze_count()


def release_free_memory(collect: bool = True) -> None:
    """Give memory freed after a large build back to the OS (glibc keeps it otherwise); `collect` runs a full
    garbage collection first (it holds the interpreter: other threads wait)."""
    if collect:
        gc.collect()
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)
