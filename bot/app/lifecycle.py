"""How `paperbot run` lives and stops: SIGTERM/SIGINT, work in flight, the heartbeat.

`serve(settings, connect)` opens the services, builds the bot, runs `connect(bot)`
(`bot.start(token)` for Discord; the harness in tests) and waits for it to end
or for SIGTERM/SIGINT. On a signal (`docker stop` sends SIGTERM; Ctrl-C is SIGINT)
it stops within SHUTDOWN_GRACE + a second or so, well inside Docker's 10 s:

1. new questions are refused with a short "restarting" reply (PaperBot.stopping);
2. answers in flight get SHUTDOWN_GRACE seconds to finish and be sent; the rest are cancelled
   (a second signal cancels them at once);
3. the Discord connection is closed (the gateway session ends with close code 1000);
4. the services close: the LLM client, then the store (its file lock released);
5. the process exits 0.

A signal during start-up stops the first ingest at its next batch (what is written
is kept; the next start carries on) and exits 0 as well.

The heartbeat task rewrites PAPERBOT_HEARTBEAT_FILE every PAPERBOT_HEARTBEAT_INTERVAL
seconds with the connection state (bot/health.py reads it); it is removed on exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.health import Beat, write_beat
from paperbot.settings import Settings

if TYPE_CHECKING:
    from bot.app.client import PaperBot

log = logging.getLogger(__name__)

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2
SHUTDOWN_GRACE = 3.0  # seconds answers in flight get to finish after SIGTERM before they are cancelled
CLOSE_TIMEOUT = 1.5  # seconds for the Discord connection to close
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
# The tasks discord.py runs handlers in: events, slash commands, buttons and other components.
WORK_TASK_PREFIXES = ("discord.py: ", "CommandTree-invoker", "discord-ui-view-dispatch", "discord-ui-dynamic-item",
                      "discord-ui-modal-dispatch")


class Stopping(Exception):
    """Raised inside the first ingest (from its progress callback) when a stop signal has arrived."""


class Shutdown:
    """SIGTERM and SIGINT, turned into events the loop and worker threads can read."""

    def __init__(self) -> None:
        self.requested = asyncio.Event()
        self.forced = asyncio.Event()  # a second signal: do not wait for work in flight
        self.flag = threading.Event()  # the same as `requested`, for worker threads
        self._installed: list[signal.Signals] = []

    def install(self, loop: asyncio.AbstractEventLoop) -> None:
        for sig in STOP_SIGNALS:
            try:
                loop.add_signal_handler(sig, self.signal, sig)
            except (NotImplementedError, RuntimeError):  # Windows, or not the main thread: Ctrl-C still works
                continue
            self._installed.append(sig)

    def remove(self, loop: asyncio.AbstractEventLoop) -> None:
        for sig in self._installed:
            loop.remove_signal_handler(sig)
        self._installed.clear()

    def signal(self, sig: int) -> None:
        name = signal.Signals(sig).name
        if self.requested.is_set():
            log.warning("%s again: cancelling the work in flight now", name)
            self.forced.set()
            return
        log.info("%s received: stopping (answers in flight get %.0f s)", name, SHUTDOWN_GRACE)
        self.flag.set()
        self.requested.set()

    def check(self, *_: object) -> None:
        """A progress callback: raises Stopping once a stop was asked for (checked between ingest batches)."""
        if self.flag.is_set():
            raise Stopping


class Heartbeat:
    """Rewrites the heartbeat file from the event loop; a stuck loop or a frozen process stops it."""

    def __init__(self, path: Path, interval: float) -> None:
        self.path = path
        self.interval = interval
        self.bot: PaperBot | None = None
        self.stopping = False
        self._state = "starting"
        self._since = time.time()
        self._task: asyncio.Task | None = None
        self._warned = False

    def start(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            log.warning("no heartbeat: cannot create %s (%s); `paperbot health` will report the bot unhealthy",
                        self.path.parent, exc)
            return
        self.beat()
        self._task = asyncio.create_task(self._run(), name="paperbot-heartbeat")

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            self.beat()

    def state(self) -> str:
        bot = self.bot
        if self.stopping or (bot is not None and bot.is_closed()):
            return "stopping"
        if bot is None or not bot.is_ready():
            return "starting"
        import discord  # loaded already: the bot is a discord.Client

        if isinstance(bot, discord.AutoShardedClient):  # a websocket per shard: connected when all of them are
            shards = list(bot.shards.values())
            return "connected" if shards and not any(s.is_closed() for s in shards) else "disconnected"
        ws = bot.ws
        return "connected" if ws is not None and ws.open else "disconnected"

    def store_state(self) -> tuple[str, int]:
        """The bot's store child: ("serving" or "restarting", restarts so far), or ("", 0) without one."""
        return self.bot.library.store_child() if self.bot is not None else ("", 0)

    def beat(self) -> None:
        state = self.state()
        if state != self._state:
            log.info("Discord connection: %s", state)
            self._state, self._since = state, time.time()
        try:
            store, restarts = self.store_state()
            write_beat(self.path, Beat(time=time.time(), pid=os.getpid(), interval=self.interval, state=state,
                                       since=self._since, store=store, store_restarts=restarts))
        except OSError as exc:
            if not self._warned:  # once: a full or read-only disk must not flood the log every few seconds
                log.warning("cannot write the heartbeat %s (%s)", self.path, exc)
                self._warned = True

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            with contextlib.suppress(OSError):
                self.path.unlink()  # a stopped bot has no heartbeat


def work_in_flight() -> list[asyncio.Task]:
    """The handler tasks discord.py is running (answers, searches, button clicks), not yet done."""
    return [t for t in asyncio.all_tasks() if not t.done() and t.get_name().startswith(WORK_TASK_PREFIXES)]


async def drain(shutdown: Shutdown, grace: float = SHUTDOWN_GRACE) -> tuple[int, int]:
    """Let the work in flight finish for up to `grace` seconds, then cancel what is left: (finished, cancelled)."""
    tasks = work_in_flight()
    if not tasks:
        return 0, 0
    forced = asyncio.create_task(shutdown.forced.wait())
    pending, deadline = set(tasks), time.monotonic() + grace
    try:
        while pending and not forced.done() and (remaining := deadline - time.monotonic()) > 0:
            done, _ = await asyncio.wait({*pending, forced}, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
            pending -= done
    finally:
        forced.cancel()
    left = [t for t in tasks if not t.done()]
    for t in left:
        t.cancel()
    if left:
        await asyncio.wait(left, timeout=0.5)
        log.warning("cancelled %d answer(s) still running at shutdown", len(left))
    return len(tasks) - len(left), len(left)


async def serve(settings: Settings, connect: Callable[[PaperBot], Coroutine[Any, Any, object]], *,
                sync_commands: bool = True, watch: bool = True) -> int:
    """Open the services, run the bot until `connect(bot)` ends or a stop signal arrives; then stop cleanly."""
    from bot.app.client import make_bot
    from bot.runtime import open_services

    loop = asyncio.get_running_loop()
    shutdown = Shutdown()
    shutdown.install(loop)
    heartbeat = Heartbeat(settings.heartbeat_path, settings.heartbeat_interval)
    heartbeat.start()
    try:
        # A signal here stops the first ingest at its next batch (Stopping); opening the store and the warm-up
        # search are short and end by themselves.
        async with open_services(settings, ingest_if_empty=True, warm_up=True, serving=True,
                                 progress=shutdown.check) as services:
            if shutdown.requested.is_set():
                log.info("stopped during start-up")
                return EXIT_OK
            bot = make_bot(services, sync_commands=sync_commands, watch=watch)
            heartbeat.bot = bot
            async with bot:
                connection = asyncio.create_task(connect(bot), name="paperbot-connection")
                stop = asyncio.create_task(shutdown.requested.wait())
                await asyncio.wait({connection, stop}, return_when=asyncio.FIRST_COMPLETED)
                stop.cancel()
                if not shutdown.requested.is_set():
                    result = connection.result()  # the connection ended by itself: its error, or its exit code
                    return result if isinstance(result, int) else EXIT_OK
                bot.stopping = True
                heartbeat.stopping = True
                heartbeat.beat()
                finished, cancelled = await drain(shutdown)
                await _close(bot, connection)
                log.info("stopped: %d answer(s) finished, %d cancelled; Discord connection closed", finished,
                         cancelled)
        return EXIT_OK  # the services are closed: the LLM client, then the store
    except Stopping:
        log.info("stopped during the first ingest; what it wrote is kept and the next start carries on")
        return EXIT_OK
    finally:
        await heartbeat.stop()
        shutdown.remove(loop)


async def _close(bot: PaperBot, connection: asyncio.Task) -> None:
    """Close the Discord connection (bounded), then end the task that ran it."""
    try:
        await asyncio.wait_for(bot.close(), CLOSE_TIMEOUT)
    except (asyncio.TimeoutError, OSError):
        log.warning("the Discord connection did not close within %.1f s", CLOSE_TIMEOUT, exc_info=True)
    try:
        await asyncio.wait_for(connection, CLOSE_TIMEOUT)  # cancelled on timeout
    except asyncio.CancelledError:
        if not connection.cancelled():
            raise
    except Exception:  # the connection's own error after a close, or a timeout: no news
        log.debug("the connection task ended with an error after close", exc_info=True)


def run_bot(settings: Settings) -> int:
    """`paperbot run`: open the services, start the bot and block until it stops; returns the exit code.

    SIGTERM and SIGINT stop it cleanly with exit status 0 (bot/app/lifecycle.py).
    """
    import discord

    from bot.app import replies as bot_messages
    from bot.app.guard import bot_token, token_problem

    token = bot_token(str(settings.discord.token))
    problem = token_problem(token)
    if problem:
        print(problem, file=sys.stderr)
        return EXIT_USAGE

    async def connect(bot: PaperBot) -> int:
        try:
            await bot.start(token)
        except discord.LoginFailure:
            print(bot_messages.text("LOGIN_FAILED"), file=sys.stderr)
            return EXIT_USAGE
        except OSError as exc:  # no network, DNS, proxy, TLS (aiohttp connection errors are OSErrors)
            log.debug("cannot reach Discord", exc_info=True)
            print(bot_messages.text("DISCORD_UNREACHABLE", reason=_reason(exc)), file=sys.stderr)
            return EXIT_ERROR
        return EXIT_OK

    # Until the event loop installs its handlers, SIGTERM is a KeyboardInterrupt too: an early stop exits 0.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        return asyncio.run(serve(settings, connect))
    except KeyboardInterrupt:
        return EXIT_OK
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _reason(exc: BaseException) -> str:
    """The innermost cause of a connection error, in a few words (no traceback)."""
    while True:
        inner = getattr(exc, "os_error", None) or exc.__cause__
        if not isinstance(inner, BaseException):
            break
        exc = inner
    return str(exc).strip() or type(exc).__name__

