"""Past one process: start-up and memory of bot processes on one embedded store and on a shared Chroma server.

Each bot process is the real client (bot.app.client.make_bot, its services opened as `paperbot run` opens them)
over the mock-client harness, answering QUESTIONS with /ask once it is ready; it reports how long it took to be
ready (process start to the first question possible, measured by this script) and its peak RSS (VmHWM).

  1. one process, the embedded store inside it (CHROMA_CHILD=0: its memory is the process's), started twice
     (the second start reads the view the first saved beside the store);
  2. shard 0 of 2 alone on a `chroma run` server over a copy of the same store, with an empty cache (the serving
     view is read from the server and saved in the cache);
  3. shards 0 and 1 started together on that server, sharing that cache (the saved view is read);
  the Chroma server's own peak RSS after all of it.

    .venv/bin/python -m benchmarks.shards_bench --store /tmp/reach20k/store   # e.g. reach_bench's 20,000 papers
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import REPO, chroma_server

QUESTIONS = ["how do people fine-tune by masking weights?", "what is NV-CoT?", "reward hacking in RLHF",
             "diffusion models for protein design", "which papers study sparse attention?"]


def peak_mb(pid: int | str = "self") -> float:
    """VmHWM of a process, in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def worker() -> int:
    from bot.app.client import make_bot
    from bot.harness import Harness
    from bot.runtime import open_services
    from paperbot.settings import Settings

    settings = Settings.from_env()
    async with open_services(settings, use_llm=False, warm_up=True, serving=True) as services:
        bot = make_bot(services)
        async with Harness(bot) as h:
            print(json.dumps({"ready": True}), flush=True)
            began = time.perf_counter()
            for q in QUESTIONS:
                await h.slash("ask", question=q)
            asked = (time.perf_counter() - began) / len(QUESTIONS)
            print(json.dumps({"peak_mb": peak_mb(), "ask_s": asked,
                              "papers": len(await bot.papers())}), flush=True)
    return 0


def start(env: dict[str, str]) -> tuple[subprocess.Popen, float]:
    proc = subprocess.Popen([sys.executable, "-m", "benchmarks.shards_bench", "--worker"], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return proc, time.perf_counter()


def finish(proc: subprocess.Popen, started: float) -> dict:
    assert proc.stdout is not None
    ready = json.loads(proc.stdout.readline() or "{}")
    if not ready:
        proc.wait(60)
        raise RuntimeError(f"a bot process exited with {proc.returncode} before it was ready")
    took = time.perf_counter() - started
    report = json.loads(proc.stdout.readline())
    proc.wait(60)
    return {**report, "ready_s": took}


def line(name: str, r: dict) -> str:
    return (f"  {name:<44} ready in {r['ready_s']:5.1f} s, peak RSS {r['peak_mb']:6.0f} MB, /ask {r['ask_s']:.2f} s"
            f" ({r['papers']:,} papers)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", type=Path, required=False, help="an ingested store folder (a copy is used)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return asyncio.run(worker())
    if args.store is None:
        ap.error("--store is required")
    tmp = Path(tempfile.mkdtemp(prefix="paperbot-shards-"))
    base = {**os.environ, "DISCORD_RATE_LIMIT": "10000", "PAPERBOT_ENV_FILE": "none", "HF_HUB_OFFLINE": "1"}
    print(f"load average {os.getloadavg()[0]:.1f}; store {args.store}", flush=True)
    try:
        embedded = tmp / "embedded"
        shutil.copytree(args.store, embedded, ignore=shutil.ignore_patterns("*.lock"))
        alone = {**base, "CHROMA_PATH": str(embedded), "CHROMA_CHILD": "0",
                 "PAPERBOT_CACHE_DIR": str(tmp / "cache-embedded"), "PAPERBOT_USER_DB": str(tmp / "users.sqlite3")}
        print("1. one process, embedded store (inside it)")
        print(line("first start (the view as the copy holds it)", finish(*start(alone))), flush=True)
        print(line("second start (the view it saved)", finish(*start(alone))), flush=True)
        served = tmp / "served"
        shutil.copytree(args.store, served, ignore=shutil.ignore_patterns("*.lock"))
        with chroma_server(served) as server:
            shard = {**base, **server, "DISCORD_SHARDS": "2", "PAPERBOT_CACHE_DIR": str(tmp / "cache-shards")}
            cold = finish(*start({**shard, "DISCORD_SHARD_IDS": "0", "PAPERBOT_USER_DB": str(tmp / "u0.sqlite3")}))
            print("2. shard 0 of 2 alone on the Chroma server, empty cache")
            print(line("shard 0 (view read from the server)", cold), flush=True)
            both = [start({**shard, "DISCORD_SHARD_IDS": str(i), "PAPERBOT_USER_DB": str(tmp / f"u{i}.sqlite3")})
                    for i in (0, 1)]
            warm = [finish(*p) for p in both]
            print("3. shards 0 and 1 together, the cache shared")
            for i, r in enumerate(warm):
                print(line(f"shard {i} (saved view)", r))
            chroma = [p for p in Path("/proc").iterdir() if p.name.isdigit()
                      and f"--path\0{served}" in _cmdline(p)]
            if chroma:
                print(f"  the Chroma server: peak RSS {peak_mb(chroma[0].name):.0f} MB", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


if __name__ == "__main__":
    raise SystemExit(main())
