"""20 concurrent questions through the bot (mock-client harness, real model and store).

Prints the maximum event-loop lag (goal: ≤ 100 ms) and answer latency p50/p95.
Not a test: numbers depend on the machine.

    .venv/bin/python -m benchmarks.bot_concurrency [--questions 20] [--concurrency N]
"""

from __future__ import annotations

import argparse
import asyncio
import faulthandler
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import TextIO

from benchmarks.common import REPO, percentile
from bot.app.client import PaperBot
from bot.harness import Harness
from bot.runtime import open_services
from paperbot.settings import Settings


def questions(n: int) -> list[str]:
    path = REPO / "benchmarks" / "data" / "bundled_questions.jsonl"
    qs = [json.loads(line)["question"] for line in path.read_text().splitlines() if line.strip()]
    return [qs[i % len(qs)] for i in range(n)]


async def lag_monitor(stop: asyncio.Event, interval: float = 0.01, trace: TextIO | None = None,
                      over: float = 0.1, stalls: list[tuple[float, float]] | None = None) -> float:
    """The worst delay between when a 10 ms sleep should have woken and when it did.

    Each stall longer than `over` seconds is appended to `stalls` as (seconds into the run, its length).
    With `trace` (a file), every such stall also has the stacks of all threads written to it while it lasts,
    by faulthandler's own thread (which needs no GIL, so a C call holding it is caught in the act),
    followed by a line with the stall's length.
    """
    worst = 0.0
    loop = asyncio.get_running_loop()
    start = loop.time()
    while not stop.is_set():
        t = loop.time()
        if trace:
            faulthandler.dump_traceback_later(over, file=trace)
        await asyncio.sleep(interval)
        lag = loop.time() - t - interval
        if trace:
            faulthandler.cancel_dump_traceback_later()
        if lag > over:
            if stalls is not None:
                stalls.append((t - start, lag))
            if trace:
                trace.write(f"=== stall of {lag * 1000:.0f} ms, {t - start:.1f} s into the run\n")
                trace.flush()
        worst = max(worst, lag)
    return worst


async def run(n: int, concurrency: int | None) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="paperbot-bench-"))
    env = {"CHROMA_PATH": str(tmp / "chroma"), "PAPERBOT_CACHE_DIR": str(tmp / "cache"), "DISCORD_RATE_LIMIT": "1000"}
    if concurrency:
        env["DISCORD_MAX_CONCURRENCY"] = str(concurrency)
    settings = Settings.from_env(env)
    t = time.perf_counter()
    async with open_services(settings, ingest_if_empty=True, warm_up=True) as services, \
            Harness(PaperBot(services)) as h:
        print(f"setup (ingest + warm-up): {time.perf_counter() - t:.1f} s")
        stop = asyncio.Event()
        monitor = asyncio.create_task(lag_monitor(stop))
        await asyncio.sleep(0.05)
        start = time.perf_counter()
        exchanges = [h.feed_interaction(h.slash_payload("ask", question=q, user=h.user(10**17 + i, f"user{i}")))
                     for i, q in enumerate(questions(n))]
        await asyncio.gather(*(h.wait(ex) for ex in exchanges))
        wall = time.perf_counter() - start
        stop.set()
        lag = await monitor

    defer = [ex.calls[0].at - ex.started for ex in exchanges]
    latency = [ex.last_latency() for ex in exchanges]
    answered = sum(1 for ex in exchanges if "[1]" in ex.messages[-1]["embeds"][0].get("description", ""))
    print(f"questions: {n}  concurrency cap: {settings.discord.max_concurrency}  answered with citations: {answered}")
    print(f"max event-loop lag: {lag * 1000:.1f} ms (goal <= 100 ms)")
    print(f"defer (first response): max {max(defer) * 1000:.1f} ms")
    print(f"answer latency: p50 {statistics.median(latency):.2f} s  p95 {percentile(latency, 95):.2f} s  "
          f"max {max(latency):.2f} s  wall {wall:.2f} s")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--questions", type=int, default=20)
    p.add_argument("--concurrency", type=int, default=None, help="DISCORD_MAX_CONCURRENCY (default: settings)")
    args = p.parse_args()
    asyncio.run(run(args.questions, args.concurrency))


if __name__ == "__main__":
    main()
