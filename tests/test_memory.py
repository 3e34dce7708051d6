"""The bot keeps large blocks out of the heap (paperbot/memory.py)."""

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
