"""What restricting a search to a Reach costs at 20,000 papers, with half of them in server libraries.

Server libraries live in the one Chroma collection, each paper's `library` field read into the serving view
and turned into a mask before ranking (retrieval/view.py `CorpusView.reach_mask`), instead of a collection per
server. This measures that choice on one store:

  1. The store: the bundled corpus ingested with the real model, grown to --papers by scripts/grow_store.py
     (vectors copied under new ids, nothing embedded); --store PATH keeps it there and reuses it next time.
  2. --servers x --per-server of its papers (seeded, spread over the store) are put in server libraries by
     rewriting their chunks' records in place; the content version is bumped, so the view is rebuilt.
  3. Warm searches, k=10, for --queries questions in --rounds interleaved rounds (all, program, one server:
     A B C A B C ..., so machine noise hits the three alike) after one untimed round: p50/p95 and the ratios
     against Reach.ALL (no mask); the mask's first call (it codes every paper's library once per view) against
     later ones; and whether a server's search ever returns another server's paper.

    .venv/bin/python -m benchmarks.reach_bench [--store /tmp/reach20k/store]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import DATA, REPO, bundled_questions, percentile
from bot.runtime import open_library
from ingest.store import Store
from paperbot.records import PROGRAM, RECORD_KEY, Reach, StoredChunk
from paperbot.settings import BUNDLED_CORPUS, Settings, default_cache_dir

PAGE = 2000


def bench_env(tmp: Path, store: Path) -> dict[str, str]:
    """The environment of this run: nothing of the user's paperbot configuration, the machine's model export."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHROMA_", "PAPERBOT_", "LLM_", "DISCORD_"))}
    env.setdefault("EMBEDDING_CACHE_DIR", str(default_cache_dir()))
    env.update(CHROMA_PATH=str(store), PAPERBOT_CACHE_DIR=str(tmp / "cache"), HF_HUB_OFFLINE="1",
               PAPERBOT_ENV_FILE=str(tmp / "none.env"))
    return env


def build_store(target: Path, papers: int, tmp: Path) -> None:
    """The bundled corpus ingested into tmp/base, grown to `papers` papers at `target`."""
    base = tmp / "base"
    t = time.perf_counter()
    with open_library(Settings.from_env(bench_env(tmp, base))) as lib:
        summary = lib.ingest([BUNDLED_CORPUS])
    print(f"ingested the bundled corpus with the model in {time.perf_counter() - t:.0f} s "
          f"({summary.added} papers, {summary.chunks_embedded} chunks)", flush=True)
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "scripts.grow_store", str(base), str(target), "--papers", str(papers)],
                          env=bench_env(tmp, target), cwd=REPO, capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"grow_store failed: {proc.stderr[-1500:]}")
    print(f"grown to {papers} papers in {time.perf_counter() - t:.0f} s: {proc.stdout.strip().splitlines()[-1]}",
          flush=True)


def assign(paper_ids: list[str], servers: int, per_server: int, seed: int) -> dict[str, str]:
    """Paper id -> server id for `servers` libraries of `per_server` papers, drawn at random over the store."""
    if servers * per_server > len(paper_ids):
        raise SystemExit(f"{servers} x {per_server} papers is more than the store's {len(paper_ids)}")
    drawn = random.Random(seed).sample(sorted(paper_ids), servers * per_server)
    return {pid: server_id(n // per_server) for n, pid in enumerate(drawn)}


def server_id(n: int) -> str:
    return str(1_200_000_000_000_000_000 + n)  # shaped like a Discord guild id


def mark_libraries(store: Store, library_of: dict[str, str]) -> int:
    """Set each chunk's record "library" to its paper's server ("" for the rest) in place; the chunks changed.

    The record's meta_hash follows, as an ingest would write it, so the store stays one an ingest agrees with."""
    col = store.existing_collection(store.settings.collection)
    ids, metas, offset = [], [], 0
    while True:
        page = col.get(include=["metadatas"], limit=PAGE, offset=offset)
        if not page["ids"]:
            break
        for cid, meta in zip(page["ids"], page["metadatas"]):
            record = json.loads(meta[RECORD_KEY])
            wanted = library_of.get(meta["paper_id"], PROGRAM)
            if record.get("library", PROGRAM) == wanted:
                continue
            record["library"] = wanted
            fields = StoredChunk.from_metadata(cid, "", {**meta, RECORD_KEY: json.dumps(record)}).fields
            record["meta_hash"] = fields.meta_hash
            ids.append(cid)
            metas.append({RECORD_KEY: json.dumps(record, ensure_ascii=False, separators=(",", ":"))})
        offset += len(page["ids"])
    if ids:
        store.update_metadata(ids, metas)
        store.bump_version()
    return len(ids)


def paper_ids_of(store: Store) -> list[str]:
    return sorted({c.paper_id for c in store.iter_chunks(with_text=False)})


def questions(n: int) -> list[str]:
    """The labelled questions about the bundled corpus, then its extractive ones, `n` distinct in all."""
    extractive = DATA / "extractive_questions.jsonl"
    qs = [q["question"] for q in bundled_questions()]
    qs += [json.loads(line)["question"] for line in extractive.read_text(encoding="utf-8").splitlines() if line]
    return list(dict.fromkeys(qs))[:n]


def ms(seconds: float) -> float:
    return seconds * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", type=Path, default=None,
                    help="the grown store: reused when it exists, else built there (default: a temp folder)")
    ap.add_argument("--papers", type=int, default=20000)
    ap.add_argument("--servers", type=int, default=40)
    ap.add_argument("--per-server", type=int, default=250)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="paperbot-reach-"))
    target = args.store or tmp / "store"
    if target.exists():
        print(f"reusing the store at {target}")
    else:
        build_store(target, args.papers, tmp)

    qs = questions(args.queries)
    with open_library(Settings.from_env(bench_env(tmp, target))) as lib:
        t = time.perf_counter()
        library_of = assign(paper_ids_of(lib.store), args.servers, args.per_server, args.seed)
        changed = mark_libraries(lib.store, library_of)
        print(f"{len(library_of)} papers in {args.servers} server libraries of {args.per_server}: "
              f"{changed} chunk records rewritten in {time.perf_counter() - t:.0f} s"
              + (", content version bumped" if changed else " (already marked)"))

        t = time.perf_counter()
        view = lib.retriever.view()
        lib.search(qs[0], 10)
        print(f"view: {len(view.papers)} papers, {len(view.chunk_ids)} chunks; ready and first search in "
              f"{time.perf_counter() - t:.1f} s")

        sid = server_id(0)
        reaches = {"all": Reach.ALL, "program": Reach.PROGRAM, f"server {sid}": Reach.server(sid)}
        t = time.perf_counter()
        view.reach_mask(reaches[f"server {sid}"])
        first_mask = time.perf_counter() - t
        later = {}
        for name, reach in list(reaches.items())[1:]:
            runs = []
            for _ in range(200):
                t = time.perf_counter()
                view.reach_mask(reach)
                runs.append(time.perf_counter() - t)
            later[name] = statistics.median(runs)
        print(f"reach_mask: first call {ms(first_mask):.2f} ms (codes {len(view.papers)} papers' libraries); later "
              + ", ".join(f"{name} {ms(s):.3f} ms" for name, s in later.items()) + " (median of 200)")
        for name, reach in reaches.items():
            mask = view.reach_mask(reach)
            seen = len(view.papers) if mask is None else int(mask.sum())
            print(f"  {name}: sees {seen} papers ({seen / len(view.papers):.1%})")

        # One round outside the percentiles: every reach's hits get their sentences cached, and a masked search
        # that scores its allowed chunks exactly reads their vectors from the store, once per view.
        slowest = dict.fromkeys(reaches, 0.0)
        read = dict.fromkeys(reaches, 0)
        for q in qs:
            for name, reach in reaches.items():
                before = view.vectors_read
                t = time.perf_counter()
                lib.search(q, 10, reach=reach)
                slowest[name] = max(slowest[name], time.perf_counter() - t)
                read[name] += view.vectors_read - before
        print("untimed first round: slowest search "
              + ", ".join(f"{name} {ms(s):.0f} ms" for name, s in slowest.items())
              + "; chunk vectors read for exact scoring " + ", ".join(f"{name} {n}" for name, n in read.items()))
        before = view.vectors_read

        times: dict[str, list[float]] = {name: [] for name in reaches}
        last: dict[str, list] = {name: [] for name in reaches}
        for r in range(args.rounds):
            for q in qs:
                for name, reach in reaches.items():
                    t = time.perf_counter()
                    result = lib.search(q, 10, reach=reach)
                    times[name].append(time.perf_counter() - t)
                    if r == args.rounds - 1:
                        last[name].append(result)

        print(f"warm search, k=10: {len(qs)} queries x {args.rounds} rounds, interleaved")
        base50, base95 = percentile(times["all"], 50), percentile(times["all"], 95)
        for name, runs in times.items():
            p50, p95 = percentile(runs, 50), percentile(runs, 95)
            print(f"  {name:<28} p50 {ms(p50):6.1f} ms  p95 {ms(p95):6.1f} ms  "
                  f"({p50 / base50:.2f}x / {p95 / base95:.2f}x Reach.ALL)")
        print(f"chunk vectors read during the timed rounds: {view.vectors_read - before} "
              f"(kept: {view.vectors_read}, "
              f"{view.vectors_read * lib.store.dimension * 2 / 1e6:.0f} MB as float16)")

        libs = {name: [h.paper.library for res in results for h in res.hits] for name, results in last.items()}
        server = libs[f"server {sid}"]
        foreign = sum(1 for x in server if x not in (PROGRAM, sid))
        print(f"server {sid}: {len(server)} hits over {len(qs)} queries, {server.count(sid)} from its own library, "
              f"{server.count(PROGRAM)} from the program, {foreign} from another server's library")
        print(f"program: {len(libs['program'])} hits, {sum(1 for x in libs['program'] if x != PROGRAM)} from a "
              f"server library; all: {sum(1 for x in libs['all'] if x != PROGRAM)} of {len(libs['all'])} hits "
              "from server libraries")
        print("correctness: " + ("ok" if foreign == 0 and all(x == PROGRAM for x in libs["program"])
                                 else "FAILED: a search saw papers outside its reach"))
    print(f"store: {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
