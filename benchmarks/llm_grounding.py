"""How well the check of LLM replies tells grounded answers from garbage (retrieval/grounding.py).

Two sets of labelled replies, each with the passages its prompt held:

* recorded: real replies of small models served by llama.cpp's llama-server
  (tests/data/llm_recordings/*.jsonl), labelled by hand in
  tests/data/llm_recordings/labels.jsonl (good / garbage per answer);
* scripted: good answers a capable model would write, the garbage the issue
  reports, and sentences credited to the wrong passage
  (benchmarks/data/grounding_scripted.jsonl).

Every reply goes through `retrieval.qa.judge_reply`, the very function answers
go through, with the bundled embedder. Printed per set: the share of good
replies kept as an LLM answer (goal ≥ 95 %), the share of garbage shown as an
LLM answer (goal 0), and the miscited replies shown with the right number.
`--sweep` prints the same for a range of thresholds (the calibration).

    .venv/bin/python benchmarks/llm_grounding.py [--sweep] [--verbose]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from retrieval import grounding  # noqa: E402
from retrieval.grounding import Passage  # noqa: E402
from retrieval.qa import judge_reply  # noqa: E402

RECORDINGS = REPO / "tests" / "data" / "llm_recordings"
SCRIPTED = REPO / "benchmarks" / "data" / "grounding_scripted.jsonl"


def reply_text(record: dict) -> tuple[str, str | None]:
    """(the model's text, finish_reason) from a recorded raw response or raw SSE lines."""
    if record.get("sse"):
        parts, finish = [], None
        for line in record["sse"]:
            if not line.startswith("data:") or line[5:].strip() == "[DONE]":
                continue
            try:
                chunk = json.loads(line[5:])
            except ValueError:
                continue
            for choice in chunk.get("choices") or []:
                parts.append((choice.get("delta") or {}).get("content") or "")
                finish = choice.get("finish_reason") or finish
        return "".join(parts), finish
    response = record.get("response")
    if isinstance(response, str):
        try:
            response = json.loads(response)
        except ValueError:
            return "", None
    choice = ((response or {}).get("choices") or [{}])[0]
    return (choice.get("message") or {}).get("content") or "", choice.get("finish_reason")


def passages_of(record: dict) -> list[Passage]:
    out = []
    for p in record.get("passages") or []:
        if isinstance(p, dict):
            out.append(Passage.of(int(p["n"]), p.get("label", ""), p.get("text") or p.get("quote", "")))
        else:
            n, label, text = p
            out.append(Passage.of(int(n), label, text))
    return out


def load_recorded() -> list[dict]:
    """Recorded answers joined with their labels (by `id`, else by file and line)."""
    labels_file = RECORDINGS / "labels.jsonl"
    if not labels_file.exists():
        return []
    labels = {}
    for line in labels_file.read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            labels[item["key"]] = item
    cases = []
    for path in sorted(RECORDINGS.glob("*.jsonl")):
        if path.name == "labels.jsonl":
            continue
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            record = json.loads(line)
            key = f"{path.name}:{i}"
            if record.get("kind") != "answer" or key not in labels:
                continue
            text, finish = reply_text(record)
            cases.append({"key": key, "question": record.get("question", ""), "answer": text, "finish": finish,
                          "passages": passages_of(record), "label": labels[key]["label"],
                          "right": labels[key].get("right")})
    return cases


def load_scripted() -> list[dict]:
    cases = []
    for i, line in enumerate(SCRIPTED.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            item = json.loads(line)
            cases.append({"key": f"scripted:{i}", "question": item["question"], "answer": item["answer"],
                          "finish": None, "passages": passages_of(item), "label": item["label"],
                          "right": item.get("right")})
    return cases


def measure(cases: list[dict], embed, verbose: bool = False) -> dict:
    counts = {"good": [0, 0], "garbage": [0, 0], "miscited": [0, 0]}
    for case in cases:
        verdict = judge_reply(case["answer"], case["passages"], embed, question=case["question"],
                              finish_reason=case["finish"])
        shown = bool(verdict.text)
        label = case["label"]
        if label == "miscited":
            ok = shown and verdict.used == [case["right"]]
        elif label == "good":
            ok = shown
        else:
            ok = not shown
        counts[label][0] += ok
        counts[label][1] += 1
        if verbose and not ok:
            print(f"  MISS {case['key']} [{label}] shown={shown} reason={verdict.reason}: "
                  f"{' '.join(case['answer'].split())[:140]!r} → {verdict.text[:100]!r}")
    return counts


def line(name: str, counts: dict) -> str:
    good_kept, good = counts["good"]
    garbage_hidden, garbage = counts["garbage"]
    mis_ok, mis = counts["miscited"]
    parts = [f"{name:<9}"]
    if good:
        parts.append(f"good kept {good_kept}/{good} ({100 * good_kept / good:.0f} %)")
    if garbage:
        shown = garbage - garbage_hidden
        parts.append(f"garbage shown {shown}/{garbage} ({100 * shown / garbage:.0f} %)")
    if mis:
        parts.append(f"miscited shown with the right number {mis_ok}/{mis}")
    return "  ".join(parts)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sweep", action="store_true", help="try a range of SUPPORT_THRESHOLD values")
    ap.add_argument("--verbose", action="store_true", help="print every reply judged wrongly")
    args = ap.parse_args()

    from ingest.embed import Embedder

    embedder = Embedder()
    cache: dict[str, np.ndarray] = {}

    def embed(texts: list[str]) -> np.ndarray:  # each text once: the sweep judges every reply many times
        missing = [t for t in dict.fromkeys(texts) if t not in cache]
        if missing:
            cache.update(zip(missing, embedder.encode(missing)))
        return np.stack([cache[t] for t in texts])

    sets = {"recorded": load_recorded(), "scripted": load_scripted()}
    sets["all"] = sets["recorded"] + sets["scripted"]
    print(f"SUPPORT_THRESHOLD={grounding.SUPPORT_THRESHOLD} RECITE_MARGIN={grounding.RECITE_MARGIN}; "
          f"{len(sets['recorded'])} recorded and {len(sets['scripted'])} scripted replies")
    for name, cases in sets.items():
        if cases:
            print(line(name, measure(cases, embed, verbose=args.verbose and name != "all")))
    if args.sweep:
        default = grounding.SUPPORT_THRESHOLD
        for threshold in (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7):
            grounding.SUPPORT_THRESHOLD = threshold
            print(line(f"t={threshold:.2f}", measure(sets["all"], embed)))
        grounding.SUPPORT_THRESHOLD = default
    return 0


if __name__ == "__main__":
    sys.exit(main())
