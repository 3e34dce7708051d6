"""Chroma's server over an embedded store's folder, run as a child of the bot (CHROMA_CHILD).

Chroma's embedded client holds the GIL through every write call, so while a /reindex writes, the bot's event
loop waits for each call to end: tens of milliseconds each, more on a busy machine (benchmarks/loop_lag.py).
Served by `chroma run` in a child process, the same store is written and read over HTTP: the bot's threads
only wait on a socket, which releases the GIL.

The child listens on 127.0.0.1 only, on a port the system picked. It reads its stdin until the end: when the
bot closes the pipe, or dies in any way (the system closes it), the child stops Chroma. The bot keeps the
store's lock for the child's whole life, so no other paperbot process opens the folder meanwhile.
"""

from __future__ import annotations

import logging
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from paperbot.errors import StoreError
from paperbot.settings import child_environment

log = logging.getLogger(__name__)

LOG_NAME = "paperbot-chroma.log"  # the child's output, in the store's folder, rewritten at each start
START_TIMEOUT = 60.0  # seconds for the child's first heartbeat (a cold disk, a big store)
STOP_TIMEOUT = 10.0  # seconds for the child to stop after its stdin closes, before it is killed
ATTEMPTS = 3  # a port the system picked can be taken by someone else before the child binds it

# Run by the child's interpreter: stop Chroma's server (SIGTERM to itself) once stdin ends.
CHILD = """\
import os, signal, sys, threading
def watch():
    sys.stdin.buffer.read()
    os.kill(os.getpid(), signal.SIGTERM)
threading.Thread(target=watch, daemon=True).start()
import chromadb_rust_bindings
chromadb_rust_bindings.cli(["chroma", "run", "--path", sys.argv[1], "--host", "127.0.0.1", "--port", sys.argv[2]])
"""


class ChromaChild:
    """`chroma run --path PATH` in a child process, up and answering when the constructor returns."""

    host = "127.0.0.1"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.log_path = path / LOG_NAME
        self._timed_out = False
        for attempt in range(1, ATTEMPTS + 1):
            self.port = free_port()
            self._proc = self._spawn()
            if self._wait_up():
                log.info("the store at %s is served by a child process (pid %d) on %s:%d",
                         path, self._proc.pid, self.host, self.port)
                return
            if attempt == ATTEMPTS or "Address already in use" not in self._output():
                break
        raise StoreError(f"cannot serve the store at {path} from a child process: {self._why()}. Its output is in "
                         f"{self.log_path}. Set CHROMA_CHILD=0 to open the store inside the bot instead.")

    def _spawn(self) -> subprocess.Popen:
        try:
            out = open(self.log_path, "wb")
        except OSError as exc:
            raise StoreError(f"cannot serve the store at {self.path} from a child process: cannot write "
                             f"{self.log_path} ({exc.strerror}). Set CHROMA_CHILD=0 to open the store inside "
                             "the bot instead.") from None
        with out:
            return subprocess.Popen([sys.executable, "-c", CHILD, str(self.path), str(self.port)],
                                    stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT,
                                    env=_child_env(), start_new_session=True)  # a terminal's Ctrl-C reaches the bot only

    def _wait_up(self) -> bool:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                return False
            try:
                if httpx.get(f"http://{self.host}:{self.port}/api/v2/heartbeat", timeout=1.0).status_code == 200:
                    return True
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        self._timed_out = True
        self.stop()
        return False

    def _output(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def _why(self) -> str:
        if self._timed_out:
            return f"it did not answer within {START_TIMEOUT:g} s"
        last = [line for line in self._output().splitlines() if line.strip()][-1:]
        return f"it exited with code {self._proc.poll()}" + (f" ({last[0].strip()[:200]})" if last else "")

    def alive(self) -> bool:
        return self._proc.poll() is None

    @property
    def pid(self) -> int:
        return self._proc.pid

    def ended(self, within: float) -> bool:
        """Whether the child has exited, waiting up to `within` seconds for it (a call that failed because it was
        killed can fail before the process is gone)."""
        try:
            self._proc.wait(timeout=within)
        except subprocess.TimeoutExpired:
            return False
        return True

    def exit_code(self) -> int | None:
        """The child's exit code (negative: the signal that ended it), None while it runs."""
        return self._proc.poll()

    def stop(self) -> None:
        """Close the child's stdin (it stops Chroma) and wait for it; kill it if it does not stop in time."""
        proc = self._proc
        if proc.poll() is None:
            try:
                if proc.stdin is not None:
                    proc.stdin.close()
            except OSError:
                pass
            try:
                proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                log.warning("the store's child process did not stop within %g s; killing it", STOP_TIMEOUT)
                proc.kill()
                proc.wait()
        elif proc.stdin is not None:
            proc.stdin.close()


def free_port() -> int:
    """A loopback TCP port nobody listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _child_env() -> dict[str, str]:
    """The bot's environment, less what the child does not need to see (secrets) and with plain output.

    glibc's malloc gets one arena and a fixed mmap threshold (as paperbot.memory fixes the bot's): Chroma's
    threads otherwise keep freed memory in arenas of their own. At 20,000 papers the child held 163 MB after a
    soak instead of 183 MB (173 MB with two arenas), and its writes took as long (docs/benchmarks.md)."""
    return {"MALLOC_ARENA_MAX": "1", "MALLOC_MMAP_THRESHOLD_": "131072", **child_environment(),
            "NO_COLOR": "1", "ANONYMIZED_TELEMETRY": "False"}
