"""The bot's lanes into the core: every call from the Discord client into the library or the users file is
a method marked `@core(lane)`, which runs it behind that lane's semaphore (its body moves the work off the
event loop with `asyncio.to_thread`).

* `WORK`: searches, answers, plans, similar papers, browsing and /about — at most DISCORD_MAX_CONCURRENCY at
  once, the others wait their turn;
* `INGEST`: /reindex, one at a time, beside the work lane (an ingest of a conference takes minutes: answers go
  on meanwhile);
* `LOOKUP`: the users file, the paper list, autocomplete and the watcher's bookkeeping — cheap calls bounded
  apart (LOOKUPS at once), so that /saved and autocomplete still answer within Discord's 3 s while every work
  slot is taken.

A call made from inside a call of the same lane, in the same task (find_paper → paper_choices), does not take a
second slot: a full lane would otherwise wait for itself. A task started from inside a call (a watch run after
/reindex) holds nothing and waits like any other. tests/bot/test_lanes.py checks that every method of the client that
reaches the core is marked, and that a full lane makes the next call wait.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar
from weakref import WeakKeyDictionary

WORK = "work"
LOOKUP = "lookup"
INGEST = "ingest"
LOOKUPS = 4  # lookups at once (each a few ms of SQLite or a list match; the first paper list takes seconds)

_HELD: WeakKeyDictionary[asyncio.Task, set[str]] = WeakKeyDictionary()  # the lanes each task is inside

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])


class HasLanes(Protocol):
    lanes: dict[str, asyncio.Semaphore]


def lanes(work: int, lookups: int = LOOKUPS) -> dict[str, asyncio.Semaphore]:
    """The semaphores of a client: `work` slots, `lookups` slots and one ingest."""
    return {WORK: asyncio.Semaphore(work), LOOKUP: asyncio.Semaphore(lookups), INGEST: asyncio.Semaphore(1)}


def core(lane: str) -> Callable[[F], F]:
    """Mark an async method of the client as a call into the core, run behind `self.lanes[lane]`."""
    if lane not in (WORK, LOOKUP, INGEST):
        raise ValueError(f"unknown lane {lane!r}")

    def wrap(method: F) -> F:
        @functools.wraps(method)
        async def run(self: HasLanes, *args: Any, **kwargs: Any) -> Any:
            task = asyncio.current_task()
            held = _HELD.setdefault(task, set()) if task is not None else set()
            if lane in held:
                return await method(self, *args, **kwargs)
            async with self.lanes[lane]:
                held.add(lane)
                try:
                    return await method(self, *args, **kwargs)
                finally:
                    held.discard(lane)

        run.core_lane = lane  # type: ignore[attr-defined]  # read by lane_of and the test that counts them
        return run  # type: ignore[return-value]  # the same signature: functools.wraps keeps it

    return wrap


def lane_of(method: object) -> str | None:
    """The lane a method was marked with, or None for a method that is not a core call."""
    return getattr(method, "core_lane", None)
