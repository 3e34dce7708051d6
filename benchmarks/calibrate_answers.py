"""Fit when a paper answers a question (retrieval/decision.py) on readers' labelled questions, dev splits only.

For every question of the dev sets (benchmarks/answer_bench.py: `shared-dev`, `neurips24-dev`, `own-dev`), the top
papers retrieval returns, each with its evidence and whether it is a gold paper, are the rows of a logistic
regression (standardised features, L2, Newton's method). Printed: per threshold on the probability, the
question-level curve cross-validated over the dev questions (per set and pooled), then the coefficients to paste
into retrieval/decision.py, the fitted model's log loss on the dev rows and the same curve for that model on the
questions it was fitted on: answerable questions abstained on, first citation gold, questions no paper answers
abstained on (near misses apart). The test splits are never read here: answer_bench reports them.

    .venv/bin/python -m benchmarks.calibrate_answers [--workdir DIR] [--l2 1.0]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

from benchmarks.answer_bench import library_for, neurips, own, shared_dev
from retrieval.decision import FEATURES, Evidence, confidence

DEV_SETS = ("shared-dev", "neurips24-dev", "own-dev")
# Computed but left out of the fit: z-scores over the candidates and the question's length, whose scale follows the
# corpus size (about 6 on the 57-paper corpus, 10 on 764 papers), so that no one bar serves both corpora.
LEFT_OUT = ("lead", "gap", "fused", "terms")


def collect(workdir: Path) -> list[dict]:
    """Per dev question: its kind, gold papers and the top hits' (paper id, evidence)."""
    with library_for(workdir, "bundled") as lib:
        rows = [_row(lib, item, "shared-dev") for item in shared_dev(lib)]
    with library_for(workdir, "neurips24") as lib:
        rows += [_row(lib, item, "neurips24-dev") for item in neurips(lib, "dev")]
    with library_for(workdir, "own") as lib:  # follow-ups are left out: their search depends on the conversation
        rows += [_row(lib, item, "own-dev") for item in own("dev") if not item.get("history")]
    return rows


def _row(lib, item: dict, set_name: str) -> dict:
    hits = lib.search(item["q"]).hits
    return {"set": set_name, "q": item["q"], "kind": item["kind"], "gold": item["gold"],
            "hits": [(h.paper_id, h.evidence) for h in hits if h.evidence is not None]}


def fit(x: np.ndarray, y: np.ndarray, l2: float, sample: np.ndarray | None = None,
        steps: int = 50) -> tuple[np.ndarray, float]:
    """Logistic regression by Newton's method with an L2 penalty on the weights (not the bias); `sample`
    weighs each row."""
    n, d = x.shape
    sample = np.ones(n) if sample is None else sample
    a = np.hstack([x, np.ones((n, 1))])
    w = np.zeros(d + 1)
    penalty = np.full(d + 1, l2)
    penalty[-1] = 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-np.clip(a @ w, -50, 50)))
        grad = a.T @ (sample * (p - y)) + penalty * w
        hess = (a * (sample * p * (1 - p))[:, None]).T @ a + np.diag(penalty)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w[:-1], float(w[-1])


def train_model(rows: list[dict], use: np.ndarray, l2: float) -> dict:
    """The fitted model over the features `use` marks (the others weigh 0), as `confidence`'s arguments."""
    x = np.array([e.vector() for r in rows for _, e in r["hits"]], dtype=float)
    y = np.array([pid in r["gold"] for r in rows for pid, _ in r["hits"]], dtype=float)
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-9
    mean[~use], scale[~use] = 0.0, 1.0
    # each set weighs the same: a corpus of 57 papers and one of 764 rank on different scales
    sets = [r["set"] for r in rows for _ in r["hits"]]
    count = {name: sets.count(name) for name in set(sets)}
    sample = np.array([len(sets) / (len(count) * count[name]) for name in sets])
    w_used, bias = fit(((x - mean) / scale)[:, use], y, l2, sample)
    weights = np.zeros(len(FEATURES))
    weights[use] = w_used
    return {"weights": tuple(weights), "bias": bias, "mean": tuple(mean), "scale": tuple(scale)}


def curve(rows: list[dict], model: dict | None, thresholds: list[float]) -> list[tuple]:
    """Per threshold: abstained (answerable), first citation gold, abstained (none), abstained (near miss);
    `model` None: each row's own (cross-validation)."""
    out = []
    for t in thresholds:
        ans = none = near = abst_ans = first = abst_none = abst_near = 0
        for r in rows:
            probs = [(pid, confidence(e, **(model or r["model"]))) for pid, e in r["hits"]]
            cited = [pid for pid, p in probs if p >= t]
            abstained = not cited
            if r["gold"]:
                ans += 1
                abst_ans += abstained
                first += bool(cited) and cited[0] in r["gold"]
            elif r["kind"] == "near_miss":
                near += 1
                abst_near += abstained
            else:
                none += 1
                abst_none += abstained
        out.append((t, abst_ans / max(ans, 1), first / max(ans, 1), abst_none / max(none, 1),
                    abst_near / max(near, 1)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", type=Path, help="where answer_bench keeps its stores (default: a temp dir)")
    ap.add_argument("--l2", type=float, default=1.0, help="the L2 penalty on the standardised weights")
    ap.add_argument("--features", default=",".join(f for f in FEATURES if f not in LEFT_OUT),
                    help="the features the model may use (default: all but " + ", ".join(LEFT_OUT) + ")")
    ap.add_argument("--folds", type=int, default=5, help="cross-validation folds over the dev questions")
    args = ap.parse_args()
    use = np.array([name in args.features.split(",") for name in FEATURES])
    with tempfile.TemporaryDirectory() as tmp:
        rows = collect(args.workdir or Path(tmp))
    thresholds = [i / 20 for i in range(1, 20)]
    if args.folds > 1:  # each question scored by a model fitted without it: what the choice of features rests on
        order = np.random.default_rng(34).permutation(len(rows))
        held: list[dict] = []
        for k in range(args.folds):
            test = {int(i) for i in order[k::args.folds]}
            train = [r for i, r in enumerate(rows) if i not in test]
            model = train_model(train, use, args.l2)
            held += [{**r, "model": model} for i, r in enumerate(rows) if i in test]
        print(f"cross-validated ({args.folds} folds over the dev questions), features: {args.features}")
        print("threshold  abstained(answerable)  first gold  abstained(none)  abstained(near miss)")
        for name in DEV_SETS + ("pooled",):
            print(name)
            chosen = held if name == "pooled" else [r for r in held if r["set"] == name]
            for t, aa, fg, an, am in curve(chosen, None, thresholds):
                print(f"  {t:5.2f}    {100 * aa:8.1f}%          {100 * fg:6.1f}%      {100 * an:6.1f}%         "
                      f"{100 * am:6.1f}%")
        print()
    model = train_model(rows, use, args.l2)
    x = np.array([e.vector() for r in rows for _, e in r["hits"]], dtype=float)
    y = np.array([pid in r["gold"] for r in rows for pid, _ in r["hits"]], dtype=float)
    weights, bias, mean, scale = model["weights"], model["bias"], model["mean"], model["scale"]
    p = np.array([confidence(Evidence(*v), **model) for v in x])
    loss = -np.mean(y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12))
    print(f"dev rows: {len(y)} papers of {len(rows)} questions, {int(y.sum())} gold; log loss {loss:.3f}")
    print(f"{'feature':<12} {'weight':>8} {'mean':>8} {'scale':>8}")
    for name, w, m, s in zip(FEATURES, weights, mean, scale):
        print(f"{name:<12} {w:8.3f} {m:8.3f} {s:8.3f}")
    print(f"{'bias':<12} {bias:8.3f}")
    print("\nFEATURES = " + repr(FEATURES))
    print("MEAN = (" + ", ".join(f"{m:.4f}" for m in mean) + ")")
    print("SCALE = (" + ", ".join(f"{s:.4f}" for s in scale) + ")")
    print("WEIGHTS = (" + ", ".join(f"{w:.4f}" for w in weights) + ")")
    print(f"BIAS = {bias:.4f}")
    print("\nthreshold  abstained(answerable)  first gold  abstained(none)  abstained(near miss)")
    for t, aa, fg, an, am in curve(rows, model, thresholds):
        print(f"  {t:5.2f}    {100 * aa:8.1f}%          {100 * fg:6.1f}%      {100 * an:6.1f}%         "
              f"{100 * am:6.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
