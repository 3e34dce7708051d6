"""Plan quality and cost on a generated conference week, printed as numbers.

The week's program (benchmarks/shapes.py: eight invented papers, talks and posters over two days, a clash) is
ingested with the bundled corpus (57 papers without slots, as distractors) into a fresh store with the real
model. For each labelled topic (benchmarks/data/plan_topics.jsonl: the papers a plan must hold, and those it
may hold) the plan's scheduled papers are scored:

    precision   planned papers that are relevant or acceptable / planned papers
    recall      relevant papers planned / relevant papers
    empty       off-topic topics (no relevant paper) whose plan is empty

against a baseline in the same run: a plan of the top-k search hits without the /ask relevance rule (what a
plan built from `search` alone would list). Clashes are checked against every pair of overlapping talks in
the program, computed here independently. Cost: a plan against a search of the same topic, and writing the
calendar, as ratios and per-event times.

    .venv/bin/python -m benchmarks.plan_bench [-k 10]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from datetime import datetime
from pathlib import Path

from benchmarks import shapes
from benchmarks.common import REPO
from bot.runtime import open_library
from paperbot.ics import calendar
from paperbot.settings import BUNDLED_CORPUS, Settings, default_cache_dir
from retrieval.plan import build_plan, plan_events, plan_for

TOPICS = REPO / "benchmarks" / "data" / "plan_topics.jsonl"


def scheduled(plan) -> set[str]:
    return {p.paper.paper_id for s in plan.slots for p in s.papers}


def score(rows: list[dict], planned: list[set[str]]) -> dict[str, float]:
    precision, recall, empty, off = [], [], 0, 0
    for row, got in zip(rows, planned):
        ok = set(row["relevant"]) | set(row["acceptable"])
        if not row["relevant"]:
            off += 1
            empty += not got
            continue
        precision.append(len(got & ok) / len(got) if got else 1.0)
        recall.append(len(got & set(row["relevant"])) / len(row["relevant"]))
    return {"precision": sum(precision) / len(precision), "recall": sum(recall) / len(recall),
            "empty_off_topic": empty / off if off else 1.0}


def expected_clashes() -> set[tuple[str, str]]:
    """Every pair of talks of the program that overlap in time, in different sessions or rooms."""
    talks = [(e["session"], e["room_name"], datetime.fromisoformat(e["starttime"]), datetime.fromisoformat(e["endtime"]))
             for e in shapes.week_program()["results"] if e["eventtype"] in ("Oral", "Spotlight")]
    return {(a[0], b[0]) for a in talks for b in talks
            if a[:2] != b[:2] and a[2] < b[3] and b[2] < a[3]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-k", type=int, default=10)
    args = ap.parse_args()
    rows = [json.loads(line) for line in TOPICS.read_text(encoding="utf-8").splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        program = shapes.write_json(Path(tmp) / "corpus" / "week-program.json", shapes.week_program())
        settings = Settings.from_env({"CHROMA_PATH": str(Path(tmp) / "chroma"),
                                      "PAPERBOT_CACHE_DIR": str(Path(tmp) / "cache"),
                                      "EMBEDDING_CACHE_DIR": str(default_cache_dir())})
        with open_library(settings) as lib:
            lib.ingest([BUNDLED_CORPUS, program])
            lib.search("warm up")
            plans, baseline = [], []
            t_plan = t_search = 0.0
            for row in rows:
                t0 = time.perf_counter()
                plan = plan_for(lib, row["topic"], args.k)
                t1 = time.perf_counter()
                result = lib.search(row["topic"], args.k)
                t2 = time.perf_counter()
                t_plan += t1 - t0
                t_search += t2 - t1
                plans.append(scheduled(plan))
                baseline.append(scheduled(build_plan(row["topic"], [(h.paper, h.score) for h in result.hits])))
            everything = build_plan("all", [(p, 1.0) for p in lib.papers()])
    found = {(s.session, c) for s in everything.slots for c in s.clashes}
    want = expected_clashes()
    t0 = time.perf_counter()
    events = plan_events(everything)
    for _ in range(100):
        calendar(events)
    t_ics = (time.perf_counter() - t0) / 100
    ours, base = score(rows, plans), score(rows, baseline)
    print(f"topics: {len(rows)} ({sum(1 for r in rows if not r['relevant'])} off-topic), k={args.k}, "
          f"papers: {len(shapes.WEEK)} scheduled + bundled corpus")
    print(f"{'':28}{'precision':>10}{'recall':>8}{'empty off-topic':>17}")
    print(f"{'plan (relevance rule)':28}{ours['precision']:>10.3f}{ours['recall']:>8.3f}{ours['empty_off_topic']:>17.3f}")
    print(f"{'baseline (top-k hits)':28}{base['precision']:>10.3f}{base['recall']:>8.3f}{base['empty_off_topic']:>17.3f}")
    for row, got in zip(rows, plans):
        missed, extra = set(row["relevant"]) - got, got - set(row["relevant"]) - set(row["acceptable"])
        if missed or extra:
            print(f"  {row['topic']!r}: missed {sorted(missed)}, wrong {sorted(extra)}")
    print(f"clashes: {len(found)} marked, {len(want)} expected, {len(found & want)} correct")
    print(f"time: plan / search of the same topic = {t_plan / t_search:.2f}x "
          f"({t_plan / len(rows) * 1000:.1f} ms vs {t_search / len(rows) * 1000:.1f} ms per topic)")
    print(f"calendar: {len(events)} events in {t_ics * 1000:.2f} ms ({t_ics / len(events) * 1e6:.1f} µs per event)")


if __name__ == "__main__":
    main()
