"""A bot process stops cleanly on SIGTERM/SIGINT and its heartbeat tells the truth about it.

The process is tests/bot/serve_harness.py: `paperbot run`'s own serve() (start-up,
heartbeat, signal handling, shutdown) with the harness in place of Discord, over
the real model and a real Chroma store; the LLM is the loopback test endpoint.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.health import Beat, problem, write_beat
from ingest.store import Store
from tests.conftest import REPO, make_settings, seed_store
from tests.llm_server import Endpoint, Reply

pytestmark = pytest.mark.slow
STOP_BUDGET = 5.0  # seconds from the signal to the exit
QUESTION = "how do people fine-tune by masking weights?"


def slow_answer(text: str, delay: float) -> Reply:
    reply = Reply.answer(text)
    reply.delay = delay
    return reply


@pytest.fixture(autouse=True)
def ingested(tmp_path, bundled_store):
    """Every bot here starts over the bundled corpus already ingested, as a deployed bot does."""
    seed_store(bundled_store, tmp_path)


def start_bot(tmp_path: Path, *args: str, **env: str) -> subprocess.Popen:
    environment = dict(os.environ, PYTHONPATH=str(REPO), PAPERBOT_HEARTBEAT_FILE=str(tmp_path / "heartbeat.json"),
                       PAPERBOT_LOG_DIR=str(tmp_path / "logs"), **env)
    return subprocess.Popen([sys.executable, "-m", "tests.bot.serve_harness", *args], cwd=tmp_path,
                            env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_line(proc: subprocess.Popen, expected: str, timeout: float = 240.0) -> list[str]:
    """Lines the bot printed up to and including `expected` (it fails the test if the bot exits first)."""
    seen, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise AssertionError(f"the bot exited ({proc.wait()}) before printing {expected!r}: {proc.stderr.read()}")
        seen.append(line.strip())
        if line.strip().startswith(expected):
            return seen
    proc.kill()
    raise AssertionError(f"no {expected!r} within {timeout} s")


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> tuple[int, float, str, str]:
    """Send `sig`; (exit status, seconds until the exit, rest of stdout, stderr)."""
    t0 = time.monotonic()
    proc.send_signal(sig)
    try:
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, time.monotonic() - t0, out, err


def health(tmp_path: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO), PAPERBOT_HEARTBEAT_FILE=str(tmp_path / "heartbeat.json"))
    return subprocess.run([sys.executable, "-m", "bot.health"], env=env, capture_output=True, text=True, timeout=60)


def log_text(tmp_path: Path) -> str:
    return (tmp_path / "logs" / "paperbot.log").read_text(encoding="utf-8")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_signal_lets_the_answer_in_flight_finish_then_exits_0_within_5_s(tmp_path, sig):
    with Endpoint() as llm:
        llm.enqueue(*[slow_answer("Masking weights selects a sparse subnetwork to fine-tune [1].", 1.5)] * 4)
        proc = start_bot(tmp_path, "--dm", QUESTION, LLM_BASE_URL=llm.base_url, LLM_MODEL="m", LLM_STREAM="false")
        wait_for_line(proc, "asked")
        time.sleep(0.3)  # the answer is waiting for the language model
        code, seconds, out, err = stop(proc, sig)
    assert code == 0, err
    assert seconds < STOP_BUDGET
    assert "answered 1" in out  # finished and sent after the signal
    assert "stopped: 1 answer(s) finished, 0 cancelled; Discord connection closed" in log_text(tmp_path)
    assert "Traceback" not in err
    assert not (tmp_path / "heartbeat.json").exists()  # a stopped bot has no heartbeat
    with Store(make_settings(tmp_path).store, "all-MiniLM-L6-v2", 384) as store:  # its lock is free again
        assert store.count() > 0


def test_an_answer_that_outlives_the_grace_period_is_cancelled_and_the_bot_still_exits_within_5_s(tmp_path):
    with Endpoint() as llm:
        llm.enqueue(*[slow_answer("never in time [1].", 8)] * 4)
        proc = start_bot(tmp_path, "--dm", QUESTION, LLM_BASE_URL=llm.base_url, LLM_MODEL="m", LLM_STREAM="false",
                         LLM_TIMEOUT="60")
        wait_for_line(proc, "asked")
        time.sleep(0.3)
        code, seconds, out, err = stop(proc)
    assert code == 0, err
    assert seconds < STOP_BUDGET
    assert "answered 0" in out  # nothing was sent: the answer was cancelled
    assert "0 answer(s) finished, 1 cancelled" in log_text(tmp_path)


def test_a_frozen_bot_turns_unhealthy_within_two_probe_intervals_and_healthy_again_when_thawed(tmp_path):
    interval = 0.5  # the heartbeat; stale after 3 ticks
    probe_every = 3 * interval  # as in the image: HEALTHCHECK every 15 s over a 5 s heartbeat
    proc = start_bot(tmp_path, PAPERBOT_HEARTBEAT_INTERVAL=str(interval))
    try:
        wait_for_line(proc, "ready")
        ok = health(tmp_path)
        assert ok.returncode == 0 and "healthy (starting" in ok.stdout, ok.stderr
        os.kill(proc.pid, signal.SIGSTOP)
        frozen_at, probes = time.monotonic(), 0
        while True:
            time.sleep(probe_every)
            probes += 1
            result = health(tmp_path)
            if result.returncode != 0:
                break
            assert probes < 2, "still healthy two probe intervals after the freeze"
        assert time.monotonic() - frozen_at < 2 * probe_every + 2.0  # two probes, and the probes' own run time
        assert "is frozen or gone" in result.stderr and str(proc.pid) in result.stderr
        os.kill(proc.pid, signal.SIGCONT)
        time.sleep(2 * interval)
        assert health(tmp_path).returncode == 0
        code, seconds, _, err = stop(proc)
        assert code == 0 and seconds < STOP_BUDGET, err
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGCONT)
            proc.kill()
    gone = health(tmp_path)
    assert gone.returncode == 1 and "is not running" in gone.stderr


def beat_file(tmp_path: Path, *, age: float, state: str, since_ago: float, interval: float = 5.0) -> Path:
    now = time.time()
    path = tmp_path / "heartbeat.json"
    write_beat(path, Beat(time=now - age, pid=123, interval=interval, state=state, since=now - since_ago))
    return path


@pytest.mark.parametrize(("age", "state", "since_ago", "unhealthy_because"), [
    (1, "connected", 3600, None),
    (1, "starting", 600, None),  # a first ingest may take long; the loop still ticks
    (1, "disconnected", 30, None),  # discord.py reconnects by itself
    (1, "disconnected", 61, "not been connected to Discord for 61 s"),
    (16, "connected", 3600, "is 16 s old (written every 5 s)"),
    (1, "stopping", 1, "stopping"),
])
def test_health_reads_the_heartbeat(tmp_path, age, state, since_ago, unhealthy_because):
    why = problem(beat_file(tmp_path, age=age, state=state, since_ago=since_ago))
    assert why is None if unhealthy_because is None else unhealthy_because in why


def test_health_of_a_missing_or_broken_heartbeat_says_so(tmp_path):
    assert "is not running" in problem(tmp_path / "none.json")
    (tmp_path / "bad.json").write_text(json.dumps({"time": "x"}), encoding="utf-8")
    assert "unreadable" in problem(tmp_path / "bad.json")
