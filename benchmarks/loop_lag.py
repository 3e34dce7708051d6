"""Is the bot's event loop free while it reindexes, and while it rebuilds its serving view?

The real client runs over the mock-client harness (real discord.py classes, real store
and model). While the slow work runs in its worker threads, a stream of interactions
arrives, one every 150 ms in turn: /paper, its autocomplete, author autocomplete, /ask.
Printed: the largest event-loop lag (a 10 ms sleep woken late; goal ≤ 100 ms) and the
acknowledgement times (event → first response: the defer of /ask, the autocomplete
answer, /paper's message, counted from when the interaction was due, so a stalled loop
counts against it; goal ≤ 200 ms; Discord drops what is not acknowledged in 3 s).

  1. /reindex of the bundled corpus after every abstract in it changed (all 57 papers
     embedded again, the old chunks deleted), then the view rebuilt for the new version.
     With `--program FILE`, the /reindex adds that program to the bundled corpus instead.
  3. With `--upload N`: `/library add` of a paper list of N papers (the 800 real NeurIPS 2024 papers of
     ../shared/labelled/neurips2024_papers, repeated under new ids with a sentence of their own), over the bundled
     corpus: the upload's speed (papers/s against the model alone on the same abstracts, measured in the same run
     first) and the loop's lag meanwhile.
  2. A view rebuild on a bigger store (`--store`, e.g. one grown by scripts/grow_store.py): another
     process's write (a new content version) makes the next question rebuild it.

    .venv/bin/python -m benchmarks.loop_lag [--store /tmp/startup/store-20000] [--program FILE] [--server]
        [--in-process] [--stalls FILE] [--upload 5000 [--skip-reindex]]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import TextIO

from benchmarks.bot_concurrency import lag_monitor
from benchmarks.common import chroma_server, percentile
from bot.app.client import PaperBot
from bot.harness import MANAGE_GUILD, MEMBER_PERMS, Harness
from bot.harness.payloads import Upload
from bot.runtime import open_services
from paperbot.settings import BUNDLED_CORPUS, Settings

PACE = 0.15  # seconds between two interactions of the stream
QUESTIONS = ["how do people fine-tune by masking weights?", "what is NV-CoT?", "reward hacking in RLHF",
             "diffusion models for protein design"]


def revise_corpus(src: Path, dst: Path) -> None:
    """A copy of the bundled corpus where every abstract gained a sentence: each paper is new to the store."""
    dst.mkdir(parents=True, exist_ok=True)
    for f in sorted(src.iterdir()):
        header, *abstracts = f.read_text(encoding="utf-8").split("\n\n")
        revised = [a.rstrip() + " This revision adds one sentence." for a in abstracts if a.strip()]
        (dst / f.name).write_text("\n\n".join([header, *revised]) + "\n", encoding="utf-8")


async def stream(h: Harness, stop: asyncio.Event, acks: dict[str, list[float]], answers: list[float]) -> None:
    """One interaction every PACE seconds until `stop`; each one's acknowledgement time by kind."""
    papers = await h.bot.papers()
    label = papers[0].label
    running: set[asyncio.Task] = set()
    i = 0

    async def one(kind: str, ex, planned: float) -> None:
        while not ex.calls:
            await asyncio.sleep(0.002)
        acks[kind].append(ex.calls[0].at - planned)  # from when Discord would have delivered it
        await h.wait(ex, timeout=600)
        if kind == "ask":
            answers.append(ex.last_latency() or float("nan"))
        h.forget(ex)

    start = time.perf_counter()
    while not stop.is_set():
        planned = start + i * PACE
        user = h.user(10**17 + i % 40, f"user{i % 40}")
        kind = ("paper", "paper autocomplete", "author autocomplete", "ask")[i % 4]
        if kind == "paper":
            ex = h.feed_interaction(h.slash_payload("paper", paper=label, user=user))
        elif kind == "ask":
            ex = h.feed_interaction(h.slash_payload("ask", question=QUESTIONS[i // 4 % len(QUESTIONS)], user=user))
        else:
            command, option, value = ("paper", "paper", label[:3]) if kind == "paper autocomplete" else \
                ("search", "author", "Zh")
            command_obj = h._command(command)
            data = {"id": str(h.payloads.next_id()), "name": command, "type": 1,
                    "options": h.payloads.options(command_obj, {"query": "x", option: value} if command == "search"
                                                  else {option: value}, focused=option)}
            ex = h.feed_interaction(h.payloads.interaction(4, data, user=user, dm=False, roles=(),
                                                           permissions=MEMBER_PERMS), name=kind)
        task = asyncio.create_task(one(kind, ex, planned))
        running.add(task)
        task.add_done_callback(running.discard)
        i += 1
        await asyncio.sleep(max(0.0, start + i * PACE - time.perf_counter()))
    await asyncio.gather(*running)


def report(name: str, lag: float, acks: dict[str, list[float]], answers: list[float], took: float,
           stalls: list[tuple[float, float]], phases: list[tuple[float, str]]) -> None:
    every = [a for v in acks.values() for a in v]
    print(f"{name}: {took:.1f} s; max event-loop lag {lag * 1000:.0f} ms (goal <= 100 ms); acknowledgements: "
          f"max {max(every) * 1000:.0f} ms (goal <= 200 ms) over {len(every)}", flush=True)
    if phases:
        print("  phases: " + ", ".join(f"{what} at {at:.1f} s" for at, what in phases))
    if stalls:
        worst = sorted(stalls, key=lambda s: -s[1])[:10]
        print(f"  stalls over 100 ms: {len(stalls)}, over 150 ms: {sum(ms > 0.15 for _, ms in stalls)}; the largest: "
              + ", ".join(f"{ms * 1000:.0f} ms at {at:.1f} s" for at, ms in worst))
    for kind, values in acks.items():
        if values:
            print(f"  {kind}: {len(values)}, p50 {statistics.median(values) * 1000:.0f} ms, "
                  f"max {max(values) * 1000:.0f} ms")
    if answers:
        print(f"  /ask answered: p50 {statistics.median(answers):.2f} s, p95 {percentile(answers, 95):.2f} s")


@contextlib.contextmanager
def collections_timed(began: float):
    """Every garbage-collector pass while the block runs: (seconds since `began`, its length, its generation).
    A pass holds the GIL in whichever thread allocated, the event loop's included."""
    passes: list[tuple[float, float, int]] = []
    started: list[float] = []

    def note(phase: str, info: dict) -> None:
        now = time.monotonic()  # the loop's clock
        if phase == "start":
            started[:] = [now]
        elif started:
            passes.append((started[0] - began, now - started[0], info["generation"]))

    gc.callbacks.append(note)
    try:
        yield passes
    finally:
        gc.callbacks.remove(note)


async def measure(h: Harness, name: str, work, trace: TextIO | None = None) -> None:
    """Run `work` (a coroutine factory, given a function that marks a phase) with the stream of
    interactions beside it; print the figures."""
    stop = asyncio.Event()
    acks: dict[str, list[float]] = {k: [] for k in ("paper", "paper autocomplete", "author autocomplete", "ask")}
    answers: list[float] = []
    stalls: list[tuple[float, float]] = []
    phases: list[tuple[float, str]] = []
    monitor = asyncio.create_task(lag_monitor(stop, trace=trace, stalls=stalls))
    began = asyncio.get_running_loop().time()

    def mark(what: str) -> None:
        phases.append((asyncio.get_running_loop().time() - began, what))

    feeder = asyncio.create_task(stream(h, stop, acks, answers))
    await asyncio.sleep(0.3)
    start = time.perf_counter()
    with collections_timed(began) as passes:
        await work(mark)
        took = time.perf_counter() - start
        await asyncio.sleep(0.5)
        stop.set()
        await feeder
    report(name, await monitor, acks, answers, took, stalls, phases)
    slow = [(at, ms, gen) for at, ms, gen in passes if ms > 0.02]
    print(f"  garbage collector: {len(passes)} passes, {sum(gen == 2 for _, _, gen in passes)} full; over 20 ms: "
          + (", ".join(f"{ms * 1000:.0f} ms (generation {gen}) at {at:.1f} s" for at, ms, gen in slow) or "none"))


async def reindex_case(tmp: Path, program: Path | None = None, trace: TextIO | None = None,
                       server: dict[str, str] | None = None) -> None:
    corpus = tmp / "corpus"
    shutil.copytree(BUNDLED_CORPUS, corpus)
    env = {**os.environ, "CHROMA_PATH": str(tmp / "chroma"), "PAPERBOT_CACHE_DIR": str(tmp / "cache"),
           "PAPERBOT_CORPUS": str(corpus), "DISCORD_RATE_LIMIT": "10000", **(server or {})}
    settings = Settings.from_env(env)
    async with open_services(settings, ingest_if_empty=True, warm_up=True, serving=True) as services, \
            Harness(PaperBot(services)) as h:
        if program:  # the conference's program is published beside the lab's papers
            shutil.copy(program, corpus / program.name)
            name = f"1. /reindex adding the program ({program.name}) to the bundled corpus, then the view rebuilt"
        else:
            shutil.rmtree(corpus)
            revise_corpus(BUNDLED_CORPUS, corpus)
            name = "1. /reindex of the bundled corpus, every abstract changed, then the view rebuilt"

        async def reindex(mark) -> None:
            mark("/reindex sent")
            ex = await h.wait(h.feed_interaction(h.slash_payload("reindex", permissions=MANAGE_GUILD)), timeout=1200)
            mark("/reindex answered")
            print(f"  reindex: {ex.calls[-1].json.get('content', '')[:120]}")
            await h.bot.papers()  # the view of the new version, as the next question builds it
            mark("paper list read")
            await asyncio.to_thread(services.library.search, "warm up")
            mark("first search done")

        await measure(h, name, reindex, trace)


LABELLED_PAPERS = Path(__file__).resolve().parents[2] / "shared" / "labelled" / "neurips2024_papers"


def upload_list(n: int) -> list[dict]:
    """n paper records from the labelled NeurIPS 2024 papers, repeated under new ids, each repeat's abstract
    with a sentence of its own (so that every paper is embedded)."""
    papers = [json.loads(f.read_text(encoding="utf-8")) for f in sorted(LABELLED_PAPERS.glob("*.json"))]
    out = []
    for i in range(n):
        p, k = papers[i % len(papers)], i // len(papers)
        out.append({"id": f"{p['id']}-{k}", "title": p["title"], "authors": p.get("authors", []),
                    "abstract": p["abstract"] + (f" Variant {k} of this abstract." if k else "")})
    return out


async def upload_case(tmp: Path, n: int, trace: TextIO | None = None) -> None:
    records = upload_list(n)
    data = "\n".join(json.dumps(r, ensure_ascii=False) for r in records).encode("utf-8")
    env = {**os.environ, "CHROMA_PATH": str(tmp / "chroma"), "PAPERBOT_CACHE_DIR": str(tmp / "cache"),
           "PAPERBOT_CORPUS": str(BUNDLED_CORPUS), "DISCORD_RATE_LIMIT": "10000",
           "LIBRARY_MAX_MB": str(max(1, len(data) // 2**20 + 1)), "LIBRARY_MAX_PAPERS": str(n)}
    settings = Settings.from_env(env)
    async with open_services(settings, ingest_if_empty=True, warm_up=True, serving=True) as services, \
            Harness(PaperBot(services)) as h:
        sample = [r["abstract"] for r in records[:200]]
        began = time.perf_counter()
        await asyncio.to_thread(services.library.embedder.encode, sample)
        model_rate = len(sample) / (time.perf_counter() - began)

        async def upload(mark) -> None:
            mark("/library add sent")
            began = time.perf_counter()
            ex = await h.wait(h.feed_interaction(h.slash_payload(
                "library add", file=Upload(f"lab-{n}.jsonl", data), permissions=MANAGE_GUILD)), timeout=7200)
            took = time.perf_counter() - began
            mark("/library add answered")
            first = ex.calls[0].at - began if ex.calls else float("nan")
            edits = sum(c.method == "PATCH" for c in ex.calls)
            print(f"  upload: {n:,} papers in {took:.1f} s = {n / took:.1f} papers/s; the model alone on 200 of "
                  f"these abstracts: {model_rate:.1f} papers/s (ratio {n / took / model_rate:.2f}); acknowledged "
                  f"in {first * 1000:.0f} ms; {edits} progress edits", flush=True)
            print(f"  result: {(ex.messages[-1]['content'] if ex.messages else '')[:160]}")

        await measure(h, f"3. /library add of {n:,} papers beside the bundled corpus", upload, trace)


async def rebuild_case(store: Path, tmp: Path, trace: TextIO | None = None) -> None:
    env = {**os.environ, "CHROMA_PATH": str(store), "PAPERBOT_CACHE_DIR": str(tmp / "cache"),
           "DISCORD_RATE_LIMIT": "10000"}
    settings = Settings.from_env(env)
    async with open_services(settings, warm_up=True, serving=True) as services, Harness(PaperBot(services)) as h:
        library = services.library
        papers = len(await h.bot.papers())

        async def rebuild(mark) -> None:
            await asyncio.to_thread(library.store.bump_version)  # as another process's ingest would
            mark("store changed")
            await asyncio.to_thread(library.search, "the question that finds the store changed")
            mark("view rebuilt")
            await asyncio.sleep(PACE * 8)  # the bot's own paper list catches up (it checks every few seconds)

        await measure(h, f"2. view rebuild at {papers:,} papers ({store})", rebuild, trace)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", type=Path, default=None, help="an ingested store for the rebuild case (a copy is used)")
    ap.add_argument("--skip-reindex", action="store_true")
    ap.add_argument("--program", type=Path, default=None,
                    help="reindex this program file added to the bundled corpus instead (e.g. conference_bench's)")
    ap.add_argument("--dir", type=Path, default=None,
                    help="where the stores go (e.g. /dev/shm: memory, to tell the disk's share of the stalls)")
    ap.add_argument("--stalls", type=Path, default=None,
                    help="write every thread's stack to this file during each stall over 100 ms (what holds the loop; "
                         "faulthandler reads the stacks of running threads, which can crash the process)")
    ap.add_argument("--server", action="store_true",
                    help="case 1 with the store in a `chroma run` server (CHROMA_HOST) instead of embedded")
    ap.add_argument("--upload", type=int, default=0, metavar="N",
                    help="case 3: /library add of an N-paper list (real NeurIPS 2024 abstracts, repeated)")
    ap.add_argument("--in-process", action="store_true",
                    help="the embedded store inside the bot's process (CHROMA_CHILD=0) instead of its child process")
    args = ap.parse_args()
    if args.in_process:
        os.environ["CHROMA_CHILD"] = "0"
    tmp = Path(tempfile.mkdtemp(prefix="paperbot-lag-", dir=args.dir))
    print(f"load average {os.getloadavg()[0]:.1f}; an interaction every {PACE * 1000:.0f} ms; the embedded store "
          f"{'inside the bot' if args.in_process else 'in a child process'}", flush=True)
    with args.stalls.open("w") if args.stalls else contextlib.nullcontext() as trace:
        if not args.skip_reindex:
            with chroma_server(tmp / "server-store") if args.server else contextlib.nullcontext() as server:
                if server:
                    print("the store is served by `chroma run`", flush=True)
                asyncio.run(reindex_case(tmp / "reindex", args.program, trace, server))
        if args.upload:
            asyncio.run(upload_case(tmp / "upload", args.upload, trace))
        if args.store:
            copy = tmp / "store"
            shutil.copytree(args.store, copy, symlinks=False)
            asyncio.run(rebuild_case(copy, tmp, trace))
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
