"""The bot's heartbeat file and the check that reads it (`paperbot health`, `python -m bot.health`).

A running `paperbot run` rewrites its heartbeat (PAPERBOT_HEARTBEAT_FILE) every
PAPERBOT_HEARTBEAT_INTERVAL seconds from a task on its event loop, with the state
of its Discord connection. The file going stale therefore means the event loop
is stuck (or the process is frozen or gone), which no "does it import" probe can
tell. The Docker HEALTHCHECK runs this module: it imports only the standard
library, python-dotenv and the settings, so a probe every 15 s costs little.

    healthy    the heartbeat is at most STALE_TICKS intervals old, and the bot is starting, connected,
               or disconnected for at most DISCONNECTED_LIMIT seconds (discord.py reconnects by itself)
    unhealthy  anything else, said in one line; exit status 1
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

STALE_TICKS = 3  # missed ticks before the heartbeat counts as stale
DISCONNECTED_LIMIT = 60.0  # seconds without a Discord connection before the bot counts as unhealthy
STATES = ("starting", "connected", "disconnected", "stopping")


@dataclass(frozen=True)
class Beat:
    """One heartbeat: when it was written, by whom, and the Discord connection state since `since`."""

    time: float
    pid: int
    interval: float
    state: str
    since: float
    store: str = ""  # "serving" or "restarting" for a store served by a child process (ingest/store.py), else ""
    store_restarts: int = 0  # how often that child was started again after it died

    def to_json(self) -> dict:
        return {"time": self.time, "pid": self.pid, "interval": self.interval, "state": self.state,
                "since": self.since, "store": self.store, "store_restarts": self.store_restarts}


def write_beat(path: Path, beat: Beat) -> None:
    """Replace the heartbeat file atomically (a reader never sees half a file)."""
    tmp = path.with_name(f".{path.name}.{beat.pid}.tmp")
    tmp.write_text(json.dumps(beat.to_json()), encoding="utf-8")
    os.replace(tmp, path)


def read_beat(path: Path) -> Beat:
    """The heartbeat at `path`; OSError or ValueError when there is none or it is not one."""
    data = json.loads(path.read_text(encoding="utf-8"))
    beat = Beat(time=float(data["time"]), pid=int(data["pid"]), interval=float(data["interval"]),
                state=str(data["state"]), since=float(data["since"]), store=str(data.get("store", "")),
                store_restarts=int(data.get("store_restarts", 0)))
    if beat.state not in STATES or beat.interval <= 0:
        raise ValueError(f"unknown state {beat.state!r} or interval {beat.interval!r}")
    return beat


def problem(path: Path, now: float | None = None) -> str | None:
    """Why the bot whose heartbeat is at `path` is not healthy, or None when it is."""
    now = time.time() if now is None else now
    try:
        beat = read_beat(path)
    except FileNotFoundError:
        return f"no heartbeat at {path}: `paperbot run` is not running (or has not started its event loop yet)"
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return f"the heartbeat at {path} is unreadable ({type(exc).__name__}: {exc})"
    age = now - beat.time
    if age > STALE_TICKS * beat.interval:
        return (f"the heartbeat at {path} is {age:.0f} s old (written every {beat.interval:g} s): the bot's event "
                f"loop is stuck, or process {beat.pid} is frozen or gone")
    if beat.state == "disconnected" and now - beat.since > DISCONNECTED_LIMIT:
        return f"the bot has not been connected to Discord for {now - beat.since:.0f} s"
    if beat.state == "stopping":
        return "the bot is stopping"
    return None


def check(path: Path) -> int:
    """Print one line (healthy or why not) and return the exit status: 0 healthy, 1 not."""
    why = problem(path)
    if why is None:
        beat = read_beat(path)
        store = {"restarting": "; its store's child process is being started again",
                 "serving": f"; its store's child process was started again {beat.store_restarts} times"
                 if beat.store_restarts else ""}.get(beat.store, "")
        print(f"paperbot: healthy ({beat.state} since {time.strftime('%H:%M:%S', time.localtime(beat.since))}, "
              f"heartbeat {max(0.0, time.time() - beat.time):.1f} s ago{store})")
        return 0
    print(f"paperbot: unhealthy: {why}", file=sys.stderr)
    return 1


def main() -> int:
    """`python -m bot.health`: the settings as `paperbot` reads them (environment, then .env), then check()."""
    from paperbot.errors import PaperbotError
    from paperbot.settings import Settings, load_env_file

    try:
        load_env_file()
        settings = Settings.from_env()
    except PaperbotError as exc:
        print(f"paperbot: configuration error: {exc}", file=sys.stderr)
        return 2
    return check(settings.heartbeat_path)


if __name__ == "__main__":
    sys.exit(main())
