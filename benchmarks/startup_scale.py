"""Start-up time against corpus size, with and without the saved serving view, as ratios in one run.

Stores: the bundled corpus (57 papers, ingested here), and copies grown from it by
scripts/grow_store.py (papers repeated under new ids, vectors copied: nothing is
embedded, so a 20,000-paper store takes a few minutes instead of hours of model time).
For each size, interleaved, each a whole process (start included):

  - `python -c "import torch"`: the baseline (goal: a cold search ≤ 1.2× it);
  - a cold `paperbot search` after the saved view was deleted (the view is rebuilt from
    the store, as every start did before it was saved);
  - a cold `paperbot search` reading the saved view;
  - the bot (the real client over the mock-client harness, `open_services` with warm-up
    as `paperbot run` does): seconds from process start to its first answered /ask
    (goal at 20,000 papers: ≤ 5 s).

    .venv/bin/python -m benchmarks.startup_scale --sizes 57 5000 20000 --runs 3 --workdir /tmp/startup
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import REPO
from paperbot.settings import default_cache_dir

QUESTION = "how do people fine-tune by masking weights?"
BOT = """
import asyncio, sys, time
from bot.app.client import PaperBot
from bot.harness import Harness
from bot.runtime import open_services
from paperbot.settings import Settings

async def main():
    settings = Settings.from_env()
    async with open_services(settings, ingest_if_empty=True, warm_up=True, serving=True) as services, \\
            Harness(PaperBot(services)) as h:
        ex = await h.slash("ask", question=sys.argv[1])
        assert "[1]" in ex.text(), ex.text()
        print("answered", flush=True)

asyncio.run(main())
"""


def timed(cmd: list[str], env: dict) -> float:
    t = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=REPO, timeout=1800)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} failed: {proc.stderr[-2000:]}")
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="*", default=[57, 5000, 20000], help="grown stores (none: --store only)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/paperbot-startup"))
    ap.add_argument("--no-rebuild", action="store_true", help="skip the runs that rebuild the view")
    ap.add_argument("--store", type=Path, action="append", default=[],
                    help="also an existing store (CHROMA_PATH), e.g. SciFact's kept by retrieval_bench --keep")
    ap.add_argument("--question", default=QUESTION, help="what the searches and the bot ask (the bot needs [1])")
    args = ap.parse_args()
    py = sys.executable
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("CHROMA_", "PAPERBOT_", "LLM_", "DISCORD_"))}
    base_env.setdefault("EMBEDDING_CACHE_DIR", str(default_cache_dir()))
    base_env.update(HF_HUB_OFFLINE="1", PYTHONPATH=str(REPO), PAPERBOT_ENV_FILE=str(args.workdir / "none.env"),
                    PAPERBOT_CACHE_DIR=str(args.workdir / "cache"))
    args.workdir.mkdir(parents=True, exist_ok=True)
    bundled = args.workdir / "store-57"
    if not (bundled / "chroma.sqlite3").exists():
        print("ingesting the bundled corpus", flush=True)
        timed([py, "-m", "bot.cli", "ingest"], {**base_env, "CHROMA_PATH": str(bundled)})
    stores = {}
    for size in args.sizes:
        store = bundled if size <= 57 else args.workdir / f"store-{size}"
        if not (store / "chroma.sqlite3").exists():
            print(f"growing a copy to {size} papers (nothing embedded)", flush=True)
            timed([py, "-m", "scripts.grow_store", str(bundled), str(store), "--papers", str(size)],
                  base_env)
        stores[size] = store
    for store in args.store:
        stores[str(store)] = store
    print(f"{args.runs} interleaved runs per figure, medians; load average {os.getloadavg()[0]:.1f} at the start",
          flush=True)
    rows = []
    for size, store in stores.items():
        env = {**base_env, "CHROMA_PATH": str(store)}
        saved = store / "paperbot-view-papers.bin"
        search = [py, "-m", "bot.cli", "search", args.question]
        timed(search, env)  # the view saved, Chroma's files in the page cache, as on a machine that served before
        torch_s, rebuild_s, saved_s, bot_s = [], [], [], []
        for _ in range(args.runs):
            torch_s.append(timed([py, "-c", "import torch"], env))
            if not args.no_rebuild:
                saved.unlink(missing_ok=True)
                rebuild_s.append(timed(search, env))
            saved_s.append(timed(search, env))
            bot_s.append(timed([py, "-c", BOT, args.question], env))
        base = statistics.median(torch_s)
        rebuild = statistics.median(rebuild_s) if rebuild_s else float("nan")
        now = statistics.median(saved_s)
        bot = statistics.median(bot_s)
        name = f"{size:,} papers" if isinstance(size, int) else str(size)
        rows.append((name, base, rebuild, now, bot))
        print(f"{name}: import torch {base:.2f} s; cold search, view rebuilt {rebuild:.2f} s = "
              f"{rebuild / base:.2f}x; view read {now:.2f} s = {now / base:.2f}x (goal <= 1.2x); "
              f"bot start to first answer {bot:.2f} s", flush=True)
    print("\n| store | import torch | cold search, view rebuilt | cold search, view read | bot: start → first answer |")
    print("|---|---:|---:|---:|---:|")
    for name, base, rebuild, now, bot in rows:
        print(f"| {name} | {base:.2f} s | {rebuild:.2f} s ({rebuild / base:.2f}×) | {now:.2f} s ({now / base:.2f}×) "
              f"| {bot:.2f} s |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
