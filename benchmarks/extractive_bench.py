"""Extractive answers on the question: which papers they cite, and when they abstain (numbers, not tests).

The labelled set, benchmarks/data/extractive_questions.jsonl, holds questions about
the bundled corpus (57 abstracts) and the conference fixtures of benchmarks/shapes.py
(ingested beside it), each with the papers that answer it (`answers`), papers that
may be cited without being wrong (`also`), and for follow-ups the earlier turn
(`history`). A question with no answering paper should be refused. Everyday
questions (benchmarks/data/offtopic_questions.txt) should be refused too.

Printed:
  * cited-paper precision: cited papers that answer the question (or are in `also`),
    over all citations, off-corpus questions included;
  * cited-paper recall: answering papers cited, over min(answers, MAX_CITED_PAPERS);
  * abstention accuracy: questions where the answer abstains exactly when nothing answers;
  * bundled hit@1: benchmarks/data/bundled_questions.jsonl, the top paper is the labelled one
    (ranking, which this benchmark's subject does not change).

    .venv/bin/python -m benchmarks.extractive_bench [--verbose] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchmarks.common import REPO
from benchmarks.shapes import PAPERS, flat_record
from bot.runtime import open_library
from paperbot.settings import Settings
from retrieval.answer import MAX_CITED_PAPERS, extractive_answer
from retrieval.followup import Turn
from retrieval.library import Library
from retrieval.qa import search_follow_up
from retrieval.types import SearchResult

DATA = REPO / "benchmarks" / "data"


def load_set(path: Path = DATA / "extractive_questions.jsonl") -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def offtopic() -> list[str]:
    return [line.strip() for line in (DATA / "offtopic_questions.txt").read_text().splitlines() if line.strip()]


@contextmanager
def corpus_library(tmp: str) -> Iterator[Library]:
    """The bundled corpus plus the conference fixtures (flat records), in a fresh store under `tmp`."""
    fixtures = Path(tmp) / "fixtures.jsonl"
    fixtures.write_text("".join(json.dumps(flat_record(p)) + "\n" for p in PAPERS))
    settings = Settings.from_env({"CHROMA_PATH": f"{tmp}/chroma", "PAPERBOT_CACHE_DIR": f"{tmp}/cache"})
    with open_library(settings) as lib:
        lib.ingest([*settings.corpus, fixtures])
        yield lib


def search_for(lib: Library, item: dict) -> SearchResult:
    """What the answer to `item` is built from: a plain search, or a follow-up read against its history."""
    history = [Turn(t["question"], tuple(t.get("cited", ()))) for t in item.get("history", ())]
    return search_follow_up(lib, item["question"], history) if history else lib.search(item["question"])


def evaluate(lib: Library, items: list[dict], negatives: list[str]) -> dict:
    """Per question: cited papers, abstention; then the totals (micro-averaged) overall and per kind."""
    rows = []
    for item in items:
        answer = extractive_answer(search_for(lib, item))
        cited = [c.paper_id for c in answer.citations]
        rows.append({**item, "cited": cited, "abstained": answer.abstained,
                     "top": [(h.paper_id, h.label) for h in answer.hits[:3]]})
    for q in negatives:
        answer = extractive_answer(lib.search(q))
        rows.append({"question": q, "answers": [], "also": [], "kind": "everyday",
                     "cited": [c.paper_id for c in answer.citations], "abstained": answer.abstained, "top": []})

    def totals(subset: list[dict]) -> dict:
        cited = sum(len(r["cited"]) for r in subset)
        right = sum(len(set(r["cited"]) & set(r["answers"] + r["also"])) for r in subset)
        wanted = sum(min(len(r["answers"]), MAX_CITED_PAPERS) for r in subset)
        found = sum(len(set(r["cited"]) & set(r["answers"])) for r in subset)
        abstain_ok = sum(r["abstained"] == (not r["answers"]) for r in subset)
        return {"questions": len(subset), "citations": cited,
                "precision": right / cited if cited else None, "recall": found / wanted if wanted else None,
                "abstention_accuracy": abstain_ok / len(subset) if subset else None,
                "wrong_abstentions": sum(r["abstained"] and bool(r["answers"]) for r in subset),
                "missed_abstentions": sum(not r["abstained"] and not r["answers"] for r in subset)}

    by_kind = defaultdict(list)
    for r in rows:
        by_kind[r["kind"]].append(r)
    labelled = [r for r in rows if r["kind"] != "everyday"]
    return {"labelled": totals(labelled), "everyday": totals(by_kind["everyday"]), "all": totals(rows),
            "kinds": {k: totals(v) for k, v in sorted(by_kind.items())}, "rows": rows}


def bundled_hit1(lib: Library) -> float:
    """Share of the bundled questions whose top-ranked paper is the labelled one (source and position)."""
    items = [json.loads(line) for line in (DATA / "bundled_questions.jsonl").read_text().splitlines() if line]
    hits = 0
    for item in items:
        top = lib.search(item["question"]).hits[0].paper
        hits += (top.source, top.position) == (item["source"], item["position"])
    return hits / len(items)


def _fmt(x: float | None) -> str:
    return "  —  " if x is None else f"{x:.3f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--verbose", action="store_true", help="list every question answered wrongly")
    ap.add_argument("--json", action="store_true", help="print the totals as JSON too")
    args = ap.parse_args()
    items = load_set()
    with tempfile.TemporaryDirectory() as tmp, corpus_library(tmp) as lib:
        report = evaluate(lib, items, offtopic())
        report["bundled_hit@1"] = bundled_hit1(lib)
        labels = {p.paper_id: p.label for p in lib.papers()}

    if args.verbose:
        for r in report["rows"]:
            ok_cites = set(r["answers"] + r["also"])
            wrong = [c for c in r["cited"] if c not in ok_cites]
            missed = [a for a in r["answers"][:MAX_CITED_PAPERS] if a not in r["cited"]]
            if wrong or r["abstained"] != (not r["answers"]) or (missed and len(r["cited"]) < MAX_CITED_PAPERS):
                print(f"[{r['kind']}] {r['question']}" + ("  (abstained)" if r["abstained"] else ""))
                for c in wrong:
                    print(f"    wrongly cited: {labels.get(c, c)[:60]}")
                for a in missed:
                    print(f"    not cited:     {labels.get(a, a)[:60]}")
        print()

    print(f"{'set':<12} {'questions':>9} {'citations':>9} {'precision':>9} {'recall':>7} {'abstention acc':>14}"
          f" {'wrong abst.':>11} {'missed abst.':>12}")
    for name, t in [("labelled", report["labelled"]), *((f"  {k}", v) for k, v in report["kinds"].items()),
                    ("everyday", report["everyday"]), ("all", report["all"])]:
        print(f"{name:<12} {t['questions']:>9} {t['citations']:>9} {_fmt(t['precision']):>9} {_fmt(t['recall']):>7}"
              f" {_fmt(t['abstention_accuracy']):>14} {t['wrong_abstentions']:>11} {t['missed_abstentions']:>12}")
    print(f"bundled questions hit@1: {report['bundled_hit@1']:.3f}")
    if args.json:
        print(json.dumps({k: v for k, v in report.items() if k != "rows"}, indent=1,
                         default=lambda x: round(x, 4)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
