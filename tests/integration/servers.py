"""A real `chroma run` server on a free loopback port, started and stopped by the tests."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from ingest.chroma_child import free_port

START_TIMEOUT = 60.0


def chroma_executable() -> str:
    beside = Path(sys.executable).with_name("chroma")
    found = str(beside) if beside.exists() else shutil.which("chroma")
    if not found:
        pytest.fail("the `chroma` command (shipped by the chromadb package) is not installed")
    return found


@dataclass
class ChromaServer:
    proc: subprocess.Popen
    port: int
    path: Path
    log: Path
    host: str = "127.0.0.1"

    @property
    def env(self) -> dict[str, str]:
        return {"CHROMA_HOST": self.host, "CHROMA_PORT": str(self.port)}

    def heartbeat(self) -> bool:
        try:
            return httpx.get(f"http://{self.host}:{self.port}/api/v2/heartbeat", timeout=1.0).status_code == 200
        except httpx.HTTPError:
            return False

    def stop(self) -> None:
        if self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGCONT)  # in case a test paused it
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=15)


def start_chroma(data_dir: Path) -> ChromaServer:
    """Start `chroma run` and wait (bounded) until its heartbeat answers."""
    port = free_port()
    log = data_dir.with_suffix(".log")
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [chroma_executable(), "run", "--path", str(data_dir), "--host", "127.0.0.1", "--port", str(port)],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env={**os.environ, "NO_COLOR": "1"},
        )
    server = ChromaServer(proc, port, data_dir, log)
    deadline = time.monotonic() + START_TIMEOUT
    while not server.heartbeat():
        if proc.poll() is not None:
            pytest.fail(f"`chroma run` exited with {proc.returncode}:\n{log.read_text(errors='replace')[-2000:]}")
        if time.monotonic() > deadline:
            server.stop()
            pytest.fail(f"`chroma run` did not answer within {START_TIMEOUT:g}s:\n"
                        f"{log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.2)
    return server
