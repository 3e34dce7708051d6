"""The bot keeps large blocks out of the heap (paperbot/memory.py), and repeated paper values once."""

from __future__ import annotations

import asyncio
import ctypes
import subprocess
import sys
import textwrap

import pytest

from paperbot import memory

PROBE = textwrap.dedent("""
    import ctypes, sys
    sys.path.insert(0, {root!r})
    from paperbot import memory

    class Mallinfo2(ctypes.Structure):
        _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                    "fsmblks", "uordblks", "fordblks", "keepcost")]

    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    libc.mallinfo2.restype = Mallinfo2
    if {steady}:
        assert memory.steady_heap()
    libc.free(libc.malloc(4 << 20))  # glibc's default raises its mmap threshold to 4 MB here
    before = libc.mallinfo2().hblks
    block = libc.malloc(224 * 1024)  # one score per chunk at 56,000 chunks
    print(libc.mallinfo2().hblks - before)
    libc.free(block)
""")


def _mapped_blocks(steady: bool) -> int:
    from pathlib import Path

    root = str(Path(memory.__file__).resolve().parents[1])
    out = subprocess.run([sys.executable, "-c", PROBE.format(root=root, steady=steady)], capture_output=True,
                         text=True, check=True)
    return int(out.stdout.strip())


@pytest.mark.skipif(memory._libc() is None or not hasattr(ctypes.CDLL("libc.so.6"), "mallinfo2"),
                    reason="needs glibc >= 2.33")
def test_steady_heap_keeps_large_blocks_in_their_own_mappings():
    assert _mapped_blocks(steady=False) == 0  # glibc's default: carved from the heap, which keeps the pages
    assert _mapped_blocks(steady=True) == 1  # mapped, and unmapped again when freed


def test_services_steady_the_heap(library, monkeypatch):
    from bot import runtime

    calls = []
    monkeypatch.setattr(runtime, "steady_heap", lambda: calls.append(1) or True)

    async def go():
        async with runtime.open_services(library.settings, use_llm=False,
                                         library=library):
            pass

    asyncio.run(go())
    assert calls == [1]


def test_papers_read_back_share_the_values_they_repeat():
    """Venue, area, track, authors... come back from the store as one string per value, not one per paper."""
    import json

    from paperbot.records import Paper, StoredChunk, chunk_id, chunk_metadata

    def read_back(n: int) -> Paper:
        paper = Paper(paper_id=f"p{n}", source="program.json", position=n, abstract="An abstract.", label=f"T{n}",
                      title=f"T{n}", authors=("Ada Lovelace", f"Author {n}"), affiliations=("Analytical Engines", ""),
                      venue="NeurIPS 2026", keywords=("sparsity",), area="Optimization", subarea="Convex",
                      presentation="poster", track="main")
        meta = chunk_metadata(paper, index=0, n_chunks=1, start=0, end=len(paper.abstract))
        meta = json.loads(json.dumps(meta))  # fresh strings, as the store's reader makes them
        return StoredChunk.from_metadata(chunk_id(paper, 0), paper.abstract, meta).fields

    a, b = read_back(1), read_back(2)
    for field in ("source", "venue", "area", "subarea", "presentation", "track"):
        assert getattr(a, field) == getattr(b, field) and getattr(a, field) is getattr(b, field), field
    assert a.authors[0] is b.authors[0] and a.affiliations[0] is b.affiliations[0]
    assert a.keywords[0] is b.keywords[0]
    assert a.title == "T1" and b.title == "T2" and a.authors[1] == "Author 1"


def test_a_warmed_up_bot_leaves_its_objects_out_of_full_collections(library, monkeypatch):
    """A full garbage-collector pass over everything a warmed-up process holds stalled the event loop ~210 ms
    when a /reindex's parsed records set one off: warm-up freezes what is alive by then (and only warm-up)."""
    from bot import runtime

    settled = []
    monkeypatch.setattr(runtime, "settle_long_lived", lambda: settled.append(1) or 0)

    async def go(warm_up: bool):
        async with runtime.open_services(library.settings, use_llm=False, library=library, warm_up=warm_up):
            pass

    asyncio.run(go(False))
    assert settled == []
    asyncio.run(go(True))
    assert settled == [1]


def test_settling_freezes_what_is_alive_and_it_is_still_freed_by_reference_counting():
    import gc
    import weakref

    class Thing:
        pass

    thing = Thing()
    gone = weakref.ref(thing)
    before = gc.get_freeze_count()
    try:
        assert memory.settle_long_lived() > before
        del thing
        assert gone() is None
    finally:
        gc.unfreeze()
