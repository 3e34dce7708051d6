"""Answers on labelled questions written by readers: abstentions, first citations and quotes (numbers, not tests).

Sets, each over its own corpus, in a store built once under --workdir:

* `shared-dev`: ../shared/labelled/seed_questions.dev.jsonl, a reader's questions over the bundled corpus,
  with the abstract sentences that answer each (see that folder's README);
* `neurips24-dev` / `neurips24-test`: benchmarks/data/neurips2024_questions.jsonl over the 800 real NeurIPS 2024
  papers of ../shared/labelled/neurips2024_papers, written by a reader of the abstracts (answerable questions by
  style, questions no paper answers, near misses), split by its `split` field; `neurips24-dev2` to `-dev4`: later
  rounds by other readers, dev only; `neurips24-test2` / `-test3`: a fifth and a sixth round, test only
  (neurips2024_questions_fifth.jsonl, _sixth.jsonl), about papers no earlier question is about; `neurips24-dev5`: a
  seventh, dev only (neurips2024_questions_seventh.jsonl), about papers no test question is about, read unseen and
  not fitted on (docs/benchmarks.md); `neurips24-test4`: an eighth, test only (neurips2024_questions_eighth.jsonl, 80
  questions, 40 of them near misses), by two more readers over the last papers no question was about;
  `neurips24-code`: questions asking for a paper's code (neurips2024_questions_code.jsonl, 40, by a reader of the
  abstracts: 20 whose abstract links its code, with that sentence as the answer, "code-link", and 20 whose abstract
  links nothing, "code-nolink", where citing the paper or abstaining with it first are both fair);
  `neurips24-define-dev` / `-test`: questions asking what a paper's named method
  is ("What is FineStyle?", "how does X work?"), with the sentences that say it, by a reader of the abstracts
  (neurips2024_questions_define.jsonl); `neurips24-zh-dev` / `-zh-test`: questions in Chinese
  (neurips2024_questions_zh.jsonl), by a reader of the abstracts writing as a Chinese-speaking lab member would (a
  question, how, keywords, Chinese with English terms, a finding; and questions no paper answers), a paper each and
  no answering sentences, split dev/test by the order they were written in; `neurips24-zh2-dev` / `-zh2-test`: a
  second round by another reader the same way, over other papers (neurips2024_questions_zh2.jsonl);
  `neurips24-zh3-test`: a third, all test, written after the changes it measures (neurips2024_questions_zh3.jsonl);
* `own-dev` / `own-test`: benchmarks/data/extractive_questions.jsonl (bundled corpus and conference fixtures;
  no answering sentences labelled) with the everyday questions of offtopic_questions.txt, written beside the
  code, halved per kind by a fixed shuffle.

The dev splits calibrate (benchmarks/calibrate_answers.py, calibrate_quotes.py); the test splits only report.

Printed per set (and per kind with --kinds):
  * abst. ans.: answerable questions the answer abstains on;
  * abst. none / abst. near: questions no paper answers (near misses apart) the answer abstains on;
  * first gold: answerable questions whose first citation is a gold paper;
  * quote ans.: answered answerable questions whose every cited gold paper is quoted with one of its
    answering sentences (and at least one gold paper is cited); the README's normalisation;
  * sent. ans.: of the sentences quoted for cited gold papers (answered answerable questions), the share that
    answer (hold, or are part of, a labelled answering sentence): what a quote adds beside the one that answers;
  * correct: the shared README's score (answered, first citation gold, its quote answers; none: abstained).
  * llm asked: questions for which an LLM, when configured, would be asked (the looser gate).

    .venv/bin/python -m benchmarks.answer_bench [--workdir DIR] [--sets shared-dev,neurips24-dev] [--kinds]
        [--verbose] [--rows FILE]

RETRIEVAL_* variables reach the stores' settings (RETRIEVAL_MIN_ANSWERED=0: without the question-level check).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import sys
import tempfile
import unicodedata
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchmarks.common import DATA, REPO, retrieval_env
from benchmarks.shapes import PAPERS, flat_record
from bot.runtime import open_library
from paperbot.settings import Settings
from retrieval.decision import llm_candidates
from retrieval.followup import Turn
from retrieval.library import Library
from retrieval.qa import answer_question
from retrieval.types import Answer

SHARED = Path(os.environ.get("PAPERBOT_SHARED", REPO.parent / "shared"))
LABELLED = SHARED / "labelled"
NEURIPS_SET = DATA / "neurips2024_questions.jsonl"
# The real-paper sets: their file and split. The second to fourth rounds of readers' questions and the seventh are dev
# only; the fifth, sixth and eighth are test only, each written over papers no earlier question is about, and read
# only here.
NEURIPS_SETS = {"neurips24-dev": (NEURIPS_SET, "dev"),
                "neurips24-dev2": (DATA / "neurips2024_questions_more.jsonl", "dev"),
                "neurips24-dev3": (DATA / "neurips2024_questions_third.jsonl", "dev"),
                "neurips24-dev4": (DATA / "neurips2024_questions_fourth.jsonl", "dev"),
                "neurips24-dev5": (DATA / "neurips2024_questions_seventh.jsonl", "dev"),
                "neurips24-test": (NEURIPS_SET, "test"),
                "neurips24-test2": (DATA / "neurips2024_questions_fifth.jsonl", "test"),
                "neurips24-test3": (DATA / "neurips2024_questions_sixth.jsonl", "test"),
                "neurips24-test4": (DATA / "neurips2024_questions_eighth.jsonl", "test"),
                "neurips24-code": (DATA / "neurips2024_questions_code.jsonl", "test"),
                "neurips24-define-dev": (DATA / "neurips2024_questions_define.jsonl", "dev"),
                "neurips24-define-test": (DATA / "neurips2024_questions_define.jsonl", "test"),
                "neurips24-zh-dev": (DATA / "neurips2024_questions_zh.jsonl", "dev"),
                "neurips24-zh-test": (DATA / "neurips2024_questions_zh.jsonl", "test"),
                "neurips24-zh2-dev": (DATA / "neurips2024_questions_zh2.jsonl", "dev"),
                "neurips24-zh2-test": (DATA / "neurips2024_questions_zh2.jsonl", "test"),
                "neurips24-zh3-test": (DATA / "neurips2024_questions_zh3.jsonl", "test")}
SETS = ("shared-dev", *NEURIPS_SETS, "own-dev", "own-test")
NEGATIVE_KINDS = ("none", "near_miss", "everyday")


# -- the labelled sets, in one shape: {"q", "kind", "gold": [paper ids], "answers": {id: [...]}, "also", "history"}

def shared_dev(lib: Library) -> list[dict]:
    by_place = {(p.source[:3], p.position): p.paper_id for p in lib.papers()}
    items = []
    for line in (LABELLED / "seed_questions.dev.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        d = json.loads(line)
        gold = {by_place[(g["source_prefix"], g["position"])]: g["answers"] for g in d["gold"]}
        items.append({"q": d["q"], "kind": d["kind"], "gold": list(gold), "answers": gold})
    return items


def neurips(lib: Library, name: str) -> list[dict]:
    """The questions of one real-paper set (`NEURIPS_SETS`)."""
    path, split = NEURIPS_SETS[name]
    ids = {p.paper_id for p in lib.papers()}
    items = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        d = json.loads(line)
        if d["split"] != split:
            continue
        gold = {g["paper_id"]: g["answers"] for g in d["gold"]}
        missing = [g for g in gold if g not in ids]
        if missing:
            raise SystemExit(f"{path.name}: {d['q']!r} names papers not in the store: {missing}")
        answers = {p: a for p, a in gold.items() if a}  # none labelled (the Chinese sets): no quote is judged
        items.append({"q": d["q"], "kind": d["kind"], "gold": list(gold), "answers": answers})
    return items


def own(split: str) -> list[dict]:
    """The set written beside the code, halved per kind by a fixed shuffle: dev calibrates, test reports."""
    items = []
    for line in (DATA / "extractive_questions.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            d = json.loads(line)
            items.append({"q": d["question"], "kind": "own-" + d["kind"], "gold": d["answers"], "answers": {},
                          "also": d.get("also", []), "history": d.get("history", [])})
    for line in (DATA / "offtopic_questions.txt").read_text(encoding="utf-8").splitlines():
        if line.strip():
            items.append({"q": line.strip(), "kind": "everyday", "gold": [], "answers": {}})
    by_kind: dict[str, list[dict]] = defaultdict(list)
    for item in items:
        by_kind[item["kind"]].append(item)
    rng = random.Random(34)
    chosen = []
    for kind in sorted(by_kind):
        group = by_kind[kind]
        order = list(range(len(group)))
        rng.shuffle(order)
        half = set(order[:(len(group) + 1) // 2])
        chosen += [item for i, item in enumerate(group) if (i in half) == (split == "dev")]
    return chosen


# -- stores ----------------------------------------------------------------------------------------

@contextmanager
def library_for(workdir: Path, name: str) -> Iterator[Library]:
    """The set's corpus in a store under `workdir/name`, ingested on first use (incremental after)."""
    if name == "neurips24":
        paths = [LABELLED / "neurips2024_papers"]
    else:
        settings = Settings.from_env({})
        paths = list(settings.corpus)
        if name == "own":
            fixtures = workdir / "fixtures.jsonl"
            fixtures.write_text("".join(json.dumps(flat_record(p)) + "\n" for p in PAPERS))
            paths.append(fixtures)
    root = workdir / name
    settings = Settings.from_env({**retrieval_env(), "CHROMA_PATH": str(root / "chroma"),
                                  "PAPERBOT_CACHE_DIR": str(root / "cache")})
    with open_library(settings) as lib:
        lib.ingest(paths)
        yield lib


# -- scoring -----------------------------------------------------------------------------------------

_LATEX = re.compile(r"\\[A-Za-z]+|[{}$^_\\]")


def normalise(text: str) -> str:
    """Whitespace, LaTeX markup and punctuation removed, lower case: how quotes and answers are compared."""
    text = unicodedata.normalize("NFKC", text)
    text = _LATEX.sub(" ", text)
    text = "".join(ch if ch.isalnum() else " " for ch in text.lower())
    return " ".join(text.split())


def quote_answers(quote: str, answers: list[str]) -> bool:
    q = normalise(quote)
    return any(normalise(a) and normalise(a) in q for a in answers)


def sentence_answers(sentence: str, answers: list[str]) -> bool:
    """Whether one quoted sentence answers: it holds a labelled answering sentence, or is a part of one."""
    q = normalise(sentence)
    return bool(q) and any(normalise(a) and (normalise(a) in q or q in normalise(a)) for a in answers)


def answer_for(lib: Library, item: dict) -> Answer:
    """The answer a user gets without an LLM (`paperbot ask`, the bot): the very function they go through."""
    history = [Turn(t["question"], tuple(t.get("cited", ()))) for t in item.get("history", ())]
    return asyncio.run(answer_question(lib, item["q"], history=history))


def score(lib: Library, items: list[dict], set_name: str) -> list[dict]:
    rows = []
    for item in items:
        answer = answer_for(lib, item)
        cited = [c.paper_id for c in answer.citations]
        quotes = {c.paper_id: c.quote for c in answer.citations}
        gold = item["gold"]
        answerable = bool(gold)
        first_gold = bool(cited) and cited[0] in gold
        cited_gold = [p for p in cited if p in gold]
        quote_ok = None
        sentences: list[bool] = []  # each sentence quoted for a cited gold paper: whether it answers
        if answerable and item["answers"] and not answer.abstained:
            quote_ok = bool(cited_gold) and all(quote_answers(quotes[p], item["answers"][p]) for p in cited_gold)
            hits = {h.paper_id: h for h in answer.hits}
            sentences = [sentence_answers(q.text, item["answers"][p]) for p in cited_gold if p in hits
                         for q in hits[p].quotes]
        if answerable:
            correct = (not answer.abstained and first_gold
                       and (quote_ok if quote_ok is not None else True))
        else:
            correct = answer.abstained
        rows.append({"set": set_name, "q": item["q"], "kind": item["kind"], "gold": gold,
                     "abstained": answer.abstained, "cited": cited, "first_gold": first_gold,
                     "quote_ok": quote_ok, "sentences": sentences, "correct": correct, "llm_asked": llm_asked(answer),
                     "quotes": quotes, "top": [h.paper_id for h in answer.hits[:3]]})
    return rows


def llm_asked(answer: Answer) -> bool:
    """Whether an LLM would be asked for this answer (retrieval/qa.py's gate): a paper plausibly relevant."""
    return bool(llm_candidates(answer.hits))


def totals(rows: list[dict]) -> dict:
    ans = [r for r in rows if r["gold"]]
    none = [r for r in rows if not r["gold"] and r["kind"] != "near_miss"]
    near = [r for r in rows if r["kind"] == "near_miss"]
    answered = [r for r in ans if not r["abstained"] and r["quote_ok"] is not None]

    def share(sub: list[dict], key) -> float | None:
        return sum(bool(key(r)) for r in sub) / len(sub) if sub else None

    return {"n": len(rows), "answerable": len(ans), "none": len(none), "near": len(near),
            "abst_ans": share(ans, lambda r: r["abstained"]), "abst_none": share(none, lambda r: r["abstained"]),
            "abst_near": share(near, lambda r: r["abstained"]), "first_gold": share(ans, lambda r: r["first_gold"]),
            "quote_ans": share(answered, lambda r: r["quote_ok"]),
            "sent_ans": (sum(sum(r["sentences"]) for r in answered) / quoted
                         if (quoted := sum(len(r["sentences"]) for r in answered)) else None),
            "correct": share(rows, lambda r: r["correct"]),
            "llm_ans": share(ans, lambda r: r["llm_asked"]), "llm_none": share(none + near, lambda r: r["llm_asked"])}


def _fmt(x: float | None) -> str:
    return "   —  " if x is None else f"{100 * x:5.1f}%"


HEADER = (f"{'set':<22} {'n':>4} {'ans':>4} {'none':>4} {'near':>4} {'abst.ans':>8} {'abst.none':>9} "
          f"{'abst.near':>9} {'1st gold':>8} {'quote ans':>9} {'sent.ans':>8} {'correct':>8} {'llm ans':>8} "
          f"{'llm none':>8}")


def line(name: str, t: dict) -> str:
    return (f"{name:<22} {t['n']:>4} {t['answerable']:>4} {t['none']:>4} {t['near']:>4} {_fmt(t['abst_ans']):>8} "
            f"{_fmt(t['abst_none']):>9} {_fmt(t['abst_near']):>9} {_fmt(t['first_gold']):>8} "
            f"{_fmt(t['quote_ans']):>9} {_fmt(t['sent_ans']):>8} {_fmt(t['correct']):>8} {_fmt(t['llm_ans']):>8} "
            f"{_fmt(t['llm_none']):>8}")


def run(workdir: Path, sets: list[str]) -> list[dict]:
    rows: list[dict] = []
    if "shared-dev" in sets:
        with library_for(workdir, "bundled") as lib:
            rows += score(lib, shared_dev(lib), "shared-dev")
    splits = [s for s in sets if s.startswith("neurips24-")]
    if splits:
        with library_for(workdir, "neurips24") as lib:
            for s in splits:
                rows += score(lib, neurips(lib, s), s)
    for s in (s for s in sets if s.startswith("own-")):
        with library_for(workdir, "own") as lib:
            rows += score(lib, own(s.removeprefix("own-")), s)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", type=Path, help="where the stores are kept between runs (default: a temp dir)")
    ap.add_argument("--sets", default=",".join(SETS), help=f"comma-separated, of {', '.join(SETS)}")
    ap.add_argument("--kinds", action="store_true", help="a line per kind of question too")
    ap.add_argument("--verbose", action="store_true", help="every question answered wrongly")
    ap.add_argument("--rows", type=Path, help="write every question's row here (JSON Lines)")
    args = ap.parse_args()
    sets = [s for s in args.sets.split(",") if s]
    unknown = [s for s in sets if s not in SETS]
    if unknown:
        ap.error(f"unknown set {unknown[0]!r}; choose from {', '.join(SETS)}")
    with tempfile.TemporaryDirectory() as tmp:
        rows = run(args.workdir or Path(tmp), sets)
    if args.rows:
        args.rows.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    if args.verbose:
        for r in rows:
            if not r["correct"]:
                what = ("abstained" if r["abstained"] else
                        "cited " + ", ".join(r["cited"]) if not r["first_gold"] else "quote: " +
                        " | ".join(r["quotes"].get(p, "")[:120] for p in r["gold"] if p in r["quotes"]))
                print(f"[{r['set']} {r['kind']}] {r['q']}\n    gold {r['gold'][:3]}; {what}")
        print()
    print(HEADER)
    by_set: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_set[r["set"]].append(r)
    for name in sets:
        print(line(name, totals(by_set[name])))
        if args.kinds:
            kinds: dict[str, list[dict]] = defaultdict(list)
            for r in by_set[name]:
                kinds[r["kind"]].append(r)
            for kind, sub in sorted(kinds.items()):
                print(line(f"  {kind}", totals(sub)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
