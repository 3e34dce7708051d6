"""Every call from the Discord client into the core waits for a slot of one of the bot's lanes (bot/app/lanes.py)."""

from __future__ import annotations

import ast
import asyncio
import inspect
from pathlib import Path

import pytest

from bot.app import client
from bot.app.lanes import LOOKUP, WORK, core, lane_of, lanes
from bot.app.seam import BotSeam
from bot.app.watcher import WatcherHost
from bot.harness import Harness
from paperbot.records import Reach

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
# Methods of PaperBot that touch the library or the users file without a lane, and why.
UNLANED = {
    "__init__": "builds the bot; nothing is called yet",
    "setup_hook": "opens the users file once, before any interaction is handled",
    "close": "closes the users database's connections after the answers drained: nothing waits behind it",
    "reindex_running": "reads whether an ingest holds the library's lock: no store call",
    "_reload_papers": "the background refresh `papers` callers wait for while holding their lookup slot: in the "
                      "lookup lane it would wait behind them",
}


def _paperbot_methods() -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    tree = ast.parse((ROOT / "bot/app/client.py").read_text(encoding="utf-8"))
    [cls] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "PaperBot"]
    return {f.name: f for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _reaches_core(method: ast.AST) -> bool:
    for node in ast.walk(method):
        if isinstance(node, ast.Attribute) and node.attr in ("library", "user_data", "to_thread") \
                and not (isinstance(node.value, ast.Name) and node.value.id == "services"):
            return True
    return False


def test_every_method_of_the_bot_that_reaches_the_core_is_behind_a_lane():
    methods = _paperbot_methods()
    reaching = {name for name, m in methods.items() if _reaches_core(m)}
    unmarked = sorted(name for name in reaching - set(UNLANED) if lane_of(getattr(client.PaperBot, name)) is None)
    assert not unmarked, f"these PaperBot methods call the core without a lane (@core): {unmarked}"
    assert len(reaching - set(UNLANED)) >= 25  # the count the lanes cover; a rename that hides them fails here
    assert set(UNLANED) <= set(methods), "an exemption names a method that is gone"


def test_every_async_call_of_the_seams_is_a_lane_or_composes_lanes():
    """The seams commands and the watcher see: each async method is a core call itself, or only composes them."""
    own = _paperbot_methods()
    checked = 0
    for seam in (BotSeam, WatcherHost):
        for name, _ in inspect.getmembers(seam, inspect.iscoroutinefunction):
            if name.startswith("_") or name not in own:  # discord.Client's own (fetch_user): Discord, not the core
                continue
            checked += 1
            if lane_of(getattr(client.PaperBot, name)) is None:  # composing: it may only await marked methods
                assert not _reaches_core(own[name]), f"{seam.__name__}.{name} reaches the core without a lane"
    assert checked >= 30


def test_the_watcher_reaches_the_core_only_through_its_host():
    source = (ROOT / "bot/app/watcher.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    touched = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    assert not touched & {"library", "user_data", "to_thread"}


class _Client:
    def __init__(self, work: int = 1, lookups: int = 1) -> None:
        self.lanes = lanes(work, lookups)
        self.inside = 0
        self.most = 0

    @core(WORK)
    async def job(self, gate: asyncio.Event) -> str:
        self.inside += 1
        self.most = max(self.most, self.inside)
        await gate.wait()
        self.inside -= 1
        return "done"

    @core(LOOKUP)
    async def outer(self) -> str:
        return await self.inner()  # the same lane, the same task: no second slot

    @core(LOOKUP)
    async def inner(self) -> str:
        return "inner"

    @core(WORK)
    async def spawn(self, gate: asyncio.Event) -> asyncio.Task:
        return asyncio.ensure_future(self.job(gate))  # a task of its own holds nothing


async def test_a_full_lane_makes_the_next_call_wait_and_the_other_lane_does_not():
    c = _Client(work=2)
    gate = asyncio.Event()
    calls = [asyncio.ensure_future(c.job(gate)) for _ in range(5)]
    await asyncio.sleep(0.01)
    assert c.inside == 2  # two slots: three wait
    assert await asyncio.wait_for(c.outer(), 1) == "inner"  # lookups pass while work is full, nested or not
    gate.set()
    assert await asyncio.gather(*calls) == ["done"] * 5
    assert c.most == 2


async def test_a_task_started_inside_a_call_waits_for_its_own_slot():
    c = _Client(work=1)
    gate = asyncio.Event()
    task = await c.spawn(gate)
    blocker = asyncio.ensure_future(c.job(gate))
    await asyncio.sleep(0.01)
    assert c.inside == 1 and c.most == 1
    gate.set()
    assert await task == "done" and await blocker == "done"
    assert c.most == 1


def test_an_unknown_lane_is_refused():
    with pytest.raises(ValueError, match="unknown lane"):
        core("fast")


async def test_the_bot_queues_a_search_while_its_work_lane_is_full(make_bot):
    async with Harness(make_bot(DISCORD_MAX_CONCURRENCY="1")) as h:
        bot = h.bot
        async with bot.lanes[WORK]:  # the one work slot, taken
            search = asyncio.ensure_future(bot.search("masking weights", 3, reach=Reach.ALL))
            watches = await asyncio.wait_for(bot.watches(1), 2)  # a lookup answers meanwhile
            await asyncio.sleep(0.05)
            assert not search.done()
        result = await asyncio.wait_for(search, 5)
    assert watches == [] and result.hits


async def test_answers_go_on_while_a_reindex_runs(make_bot, stub_library):
    stub_library.hold_ingest.clear()
    async with Harness(make_bot(DISCORD_MAX_CONCURRENCY="1")) as h:
        bot = h.bot
        reindex = asyncio.ensure_future(bot.reindex())
        assert await asyncio.to_thread(stub_library.ingest_started.wait, 5)
        result = await asyncio.wait_for(bot.search("masking weights", 3, reach=Reach.ALL), 5)  # the one work slot is free
        assert not reindex.done()
        stub_library.hold_ingest.set()
        await asyncio.wait_for(reindex, 5)
    assert result.hits
