"""Fit which sentence of a paper is quoted (retrieval/snippets.py's QUOTE_* model) on readers' labelled answers.

For every answerable question of the readers' dev sets (benchmarks/answer_bench.py: `shared-dev`,
`neurips24-dev` to `-dev4`) and of `neurips24-define-dev` (what a named method is), every sentence of each gold
paper is a row, labelled 1 when it is one of the sentences the reader marked as answering (compared as
answer_bench compares quotes). A logistic regression over the sentence features (standardised, L2, each set
weighing the same) gives the coefficients to paste into retrieval/snippets.py.
Printed beside them, cross-validated over the dev questions: how often the best-scored sentence of a gold
paper is an answering one, for the fitted model and for the score it replaces (cosine + 0.75 x term share).

    .venv/bin/python -m benchmarks.calibrate_quotes [--workdir DIR] [--l2 1.0] [--features a,b,...]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

from benchmarks.answer_bench import library_for, neurips, normalise, shared_dev
from benchmarks.calibrate_answers import READER_SETS, fit
from retrieval import snippets
from retrieval.snippets import QUOTE_FEATURES


def answers_it(sentence: str, answers: list[str]) -> bool:
    """The sentence is one the reader marked (or holds one, or is most of one: splitters differ)."""
    s = normalise(sentence)
    for a in map(normalise, answers):
        if a and s and (a in s or (s in a and len(s) >= 0.6 * len(a))):
            return True
    return False


# the readers' dev sets, and questions asking what a paper's named method is (which readers' questions seldom ask)
QUOTE_SETS = (*READER_SETS, "neurips24-define-dev")


def collect(workdir: Path) -> list[dict]:
    """Per answerable dev question and gold paper: the paper's sentences (features) and which answer."""
    rows = []
    for name in QUOTE_SETS:
        with library_for(workdir, "bundled" if name == "shared-dev" else "neurips24") as lib:
            items = shared_dev(lib) if name == "shared-dev" else neurips(lib, name)
            for item in items:
                scored = lib.retriever.sentences_for(item["q"], item["gold"])
                for pid, sentences in scored.items():
                    labels = [answers_it(s.quote.text, item["answers"][pid]) for s in sentences]
                    if any(labels):
                        rows.append({"set": name, "q": item["q"], "sentences": sentences, "labels": labels})
    return rows


def matrix(rows: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = np.array([[getattr(s, f) for f in QUOTE_FEATURES] for r in rows for s in r["sentences"]], dtype=float)
    y = np.array([lab for r in rows for lab in r["labels"]], dtype=float)
    sets = [r["set"] for r in rows for _ in r["sentences"]]
    count = {name: sets.count(name) for name in set(sets)}
    sample = np.array([len(sets) / (len(count) * count[name]) for name in sets])
    return x, y, sample


def train(rows: list[dict], use: np.ndarray, l2: float) -> dict:
    """A conditional logit: per (question, gold paper), the softmax over its sentences puts its mass on the
    answering ones (what choosing a quote is); the bias is then set so that the pooled probability is calibrated."""
    from scipy.optimize import minimize

    x, y, sample = matrix(rows)
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-9
    mean[~use], scale[~use] = 0.0, 1.0
    z = ((x - mean) / scale)[:, use]
    bounds = np.cumsum([0] + [len(r["sentences"]) for r in rows])
    groups = [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:])]
    weight = np.array([sample[g.start] for g in groups])

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        total, grad = 0.5 * l2 * w @ w, l2 * w
        for g, sw in zip(groups, weight):
            s = z[g] @ w
            s = s - s.max()
            e = np.exp(s)
            p_all = e / e.sum()
            pos = y[g] > 0
            p_pos = e[pos] / e[pos].sum()
            total -= sw * (np.log(e[pos].sum()) - np.log(e.sum()))
            grad -= sw * (p_pos @ z[g][pos] - p_all @ z[g])
        return total, grad

    w_used = minimize(loss, np.zeros(z.shape[1]), jac=True, method="L-BFGS-B").x
    _, bias = fit((z @ w_used)[:, None], y, 0.0, sample)  # a logistic on the score alone: its offset and scale
    w_used = w_used * _[0]
    weights = np.zeros(len(QUOTE_FEATURES))
    weights[use] = w_used
    return {"QUOTE_WEIGHTS": tuple(weights), "QUOTE_BIAS": bias, "QUOTE_MEAN": tuple(mean),
            "QUOTE_SCALE": tuple(scale)}


def top_answers(rows: list[dict], model: dict | None) -> dict[str, float]:
    """Per set and pooled ("all"): the share of (question, gold paper) whose best-scored sentence answers, by
    `model`, else by each row's own (cross-validation), else by the old score, cosine + COVERAGE_WEIGHT x term
    share."""
    saved = {k: getattr(snippets, k) for k in ("QUOTE_WEIGHTS", "QUOTE_BIAS", "QUOTE_MEAN", "QUOTE_SCALE")}
    out: dict[str, list[bool]] = {}
    try:
        for r in rows:
            model_r = model or r.get("model")
            if model_r:
                for k, v in model_r.items():
                    setattr(snippets, k, v)
                best = max(range(len(r["sentences"])), key=lambda i: (r["sentences"][i].score, -i))
            else:
                sentences = r["sentences"]
                best = max(range(len(sentences)),
                           key=lambda i: (snippets.answer_score(sentences[i].cosine, sentences[i].coverage), -i))
            out.setdefault(r["set"], []).append(r["labels"][best])
    finally:
        for k, v in saved.items():
            setattr(snippets, k, v)
    pooled = [hit for v in out.values() for hit in v]
    return {**{k: sum(v) / len(v) for k, v in out.items()}, "all": sum(pooled) / len(pooled)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", type=Path, help="where answer_bench keeps its stores (default: a temp dir)")
    ap.add_argument("--l2", type=float, default=1.0)
    ap.add_argument("--features", default=",".join(QUOTE_FEATURES))
    ap.add_argument("--folds", type=int, default=5)
    args = ap.parse_args()
    use = np.array([f in args.features.split(",") for f in QUOTE_FEATURES])
    with tempfile.TemporaryDirectory() as tmp:
        rows = collect(args.workdir or Path(tmp))
    print(f"{len(rows)} (question, gold paper) pairs, {sum(len(r['sentences']) for r in rows)} sentences")
    print("best sentence answers, cosine + 0.75 x term share:", _shares(top_answers(rows, None)))
    if args.folds > 1:
        order = np.random.default_rng(34).permutation(len(rows))
        held = []
        for k in range(args.folds):
            test = {int(i) for i in order[k::args.folds]}
            model = train([r for i, r in enumerate(rows) if i not in test], use, args.l2)
            held += [{**r, "model": model} for i, r in enumerate(rows) if i in test]
        print(f"best sentence answers, fitted ({args.folds}-fold cross-validated):", _shares(top_answers(held, None)))
    model = train(rows, use, args.l2)
    print("best sentence answers, fitted (in sample):", _shares(top_answers(rows, model)))
    for k, v in model.items():
        print(f"{k} = " + (f"{v:.4f}" if isinstance(v, float) else "(" + ", ".join(f"{x:.4f}" for x in v) + ")"))
    return 0


def _shares(d: dict[str, float]) -> str:
    return ", ".join(f"{k} {100 * v:.1f}%" for k, v in sorted(d.items()))


if __name__ == "__main__":
    sys.exit(main())
