"""Fit when a paper answers a question (retrieval/decision.py) on readers' labelled questions, dev splits only.

For every question of the dev sets (benchmarks/answer_bench.py: `shared-dev`, `neurips24-dev` to `-dev4`,
`own-dev`), the top papers retrieval returns, each with its evidence and whether it is a gold paper, are the rows of
a logistic regression (standardised features, L2, Newton's method). Printed: per threshold on the probability, the
question-level curve cross-validated over the dev questions (per set and pooled), then the coefficients to paste
into retrieval/decision.py, the fitted model's log loss on the dev rows and the same curve for that model on the
questions it was fitted on: answerable questions abstained on, first citation gold, questions no paper answers
abstained on (near misses apart). The test splits are never read here: answer_bench reports them.

Then the question-level model (`answered`): one row per dev question whose most probable paper reaches
RETRIEVAL_MIN_CHECKED, labelled 1 when that paper is a gold one; near misses weigh `--near-weight` times the others
(they are few, and the goal asks most of them); its cross-validated curve per set, the coefficients, and the bar:
the highest at which the readers' dev sets (not own-dev) abstain on at most 5 % of their answerable questions,
cross-validated (to the hundredth).

    .venv/bin/python -m benchmarks.calibrate_answers [--workdir DIR] [--l2 1.0] [--near-weight 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

from benchmarks.answer_bench import library_for, neurips, own, shared_dev
from retrieval.decision import FEATURES, QUESTION_FEATURES, Evidence, QuestionEvidence, answered, confidence

# written by readers who had not seen the rules
READER_SETS = ("shared-dev", "neurips24-dev", "neurips24-dev2", "neurips24-dev3", "neurips24-dev4")
DEV_SETS = (*READER_SETS, "own-dev")
# Computed but left out of the fit: z-scores over the candidates and the question's length, whose scale follows the
# corpus size (about 6 on the 57-paper corpus, 10 on 764 papers), so that no one bar serves both corpora.
LEFT_OUT = ("lead", "gap", "fused", "terms")


def collect(workdir: Path) -> list[dict]:
    """Per dev question: its kind, gold papers and the top hits' (paper id, evidence)."""
    with library_for(workdir, "bundled") as lib:
        rows = [_row(lib, item, "shared-dev") for item in shared_dev(lib)]
    with library_for(workdir, "neurips24") as lib:
        rows += [_row(lib, item, name) for name in READER_SETS[1:] for item in neurips(lib, name)]
    with library_for(workdir, "own") as lib:  # follow-ups are left out: their search depends on the conversation
        rows += [_row(lib, item, "own-dev") for item in own("dev") if not item.get("history")]
    return rows


def _row(lib, item: dict, set_name: str) -> dict:
    result = lib.search(item["q"])
    question = result.question
    first = None
    if question is not None:
        first = max((h for h in result.hits if h.confidence is not None), key=lambda h: h.confidence or 0.0).paper_id
    return {"set": set_name, "q": item["q"], "kind": item["kind"], "gold": item["gold"],
            "hits": [(h.paper_id, h.evidence) for h in result.hits if h.evidence is not None],
            "question": question, "first": first}


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


def train_question_model(rows: list[dict], l2: float, near_weight: float, use: np.ndarray) -> dict:
    """The question-level model, as `answered`'s arguments, fitted on the rows that have question evidence; the
    features `use` leaves out weigh 0."""
    x = np.array([r["question"].vector() for r in rows], dtype=float)
    y = np.array([r["first"] in r["gold"] for r in rows], dtype=float)
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[(scale < 1e-6) | ~use] = 1.0
    mean[~use] = 0.0
    sets = [r["set"] for r in rows]
    count = {name: sets.count(name) for name in set(sets)}
    sample = np.array([len(sets) / (len(count) * count[r["set"]]) * (near_weight if r["kind"] == "near_miss" else 1.0)
                       for r in rows])
    w_used, bias = fit(((x - mean) / scale)[:, use], y, l2, sample)
    w = np.zeros(len(QUESTION_FEATURES))
    w[use] = w_used
    return {"weights": tuple(w), "bias": bias, "mean": tuple(mean), "scale": tuple(scale)}


def question_curve(rows: list[dict], thresholds: list[float]) -> list[tuple]:
    """Per threshold, over all the rows (each with its `chance`, None where the per-paper model abstains):
    abstained (answerable), first citation gold, abstained (none), abstained (near miss)."""
    out = []
    for t in thresholds:
        counts = {"ans": [0, 0], "first": [0, 0], "none": [0, 0], "near": [0, 0]}
        for r in rows:
            abstained = r["chance"] is None or r["chance"] < t
            kind = "ans" if r["gold"] else "near" if r["kind"] == "near_miss" else "none"
            counts[kind][0] += 1
            counts[kind][1] += abstained
            if r["gold"]:
                counts["first"][0] += 1
                counts["first"][1] += (not abstained) and r["first"] in r["gold"]
        out.append((t, *(c[1] / max(c[0], 1) for c in (counts["ans"], counts["first"], counts["none"],
                                                          counts["near"]))))
    return out


def fit_question_model(rows: list[dict], l2: float, near_weight: float, folds: int, use: np.ndarray) -> None:
    """Cross-validate, fit and print the question-level model and its bar (see the module's docstring)."""
    checked = [r for r in rows if r["question"] is not None]
    thresholds = [i / 100 for i in range(1, 100)]  # printed every 0.05; the bar is chosen to the hundredth
    held: list[dict] = []
    for seed in (34, 35, 36):  # three shuffles: few near misses, so one split's luck shows
        order = np.random.default_rng(seed).permutation(len(checked))
        for k in range(folds):
            test = {int(i) for i in order[k::folds]}
            model = train_question_model([r for i, r in enumerate(checked) if i not in test], l2, near_weight, use)
            held += [{**r, "chance": answered(r["question"], **model)} for i, r in enumerate(checked) if i in test]
    held += [{**r, "chance": None} for r in rows if r["question"] is None for _ in range(3)]
    print(f"question-level model, cross-validated ({folds} folds, three shuffles), near misses weigh {near_weight}, "
          f"features: {', '.join(f for f, u in zip(QUESTION_FEATURES, use) if u)}")
    print("threshold  abstained(answerable)  first gold  abstained(none)  abstained(near miss)")
    by_set = {name: [r for r in held if r["set"] == name] for name in DEV_SETS}
    by_set["readers"] = [r for r in held if r["set"] in READER_SETS]
    curves = {name: question_curve(chosen, thresholds) for name, chosen in by_set.items()}
    for name, values in curves.items():
        print(name)
        for t, aa, fg, an, am in values[4::5]:
            print(f"  {t:5.2f}    {100 * aa:8.1f}%          {100 * fg:6.1f}%      {100 * an:6.1f}%         "
                  f"{100 * am:6.1f}%")
    bar = max((t for t, aa, *_ in curves["readers"] if aa <= 0.05), default=thresholds[0])
    model = train_question_model(checked, l2, near_weight, use)
    at = next(c for c in curves["readers"] if c[0] == bar)
    print(f"\nbar (readers' answerable abstained <= 5 %, cross-validated): RETRIEVAL_MIN_ANSWERED={bar:.2f} "
          f"(answerable {100 * at[1]:.1f} %, none {100 * at[3]:.1f} %, near misses {100 * at[4]:.1f} % abstained)")
    print(f"rows: {len(checked)} questions whose most probable paper reaches RETRIEVAL_MIN_CHECKED, of {len(rows)}")
    print(f"{'feature':<18} {'weight':>8} {'mean':>8} {'scale':>8}")
    for name, w, m, s in zip(QUESTION_FEATURES, model["weights"], model["mean"], model["scale"]):
        print(f"{name:<18} {w:8.3f} {m:8.3f} {s:8.3f}")
    print("\nQUESTION_MEAN = (" + ", ".join(f"{m:.4f}" for m in model["mean"]) + ")")
    print("QUESTION_SCALE = (" + ", ".join(f"{s:.4f}" for s in model["scale"]) + ")")
    print("QUESTION_WEIGHTS = (" + ", ".join(f"{w:.4f}" for w in model["weights"]) + ")")
    print(f"QUESTION_BIAS = {model['bias']:.4f}")
    fitted = [{**r, "chance": answered(r["question"], **model) if r["question"] is not None else None} for r in rows]
    print("\nthe fitted model on the questions it was fitted on (readers' dev sets)")
    for t, aa, fg, an, am in question_curve([r for r in fitted if r["set"] in READER_SETS], thresholds)[4::5]:
        print(f"  {t:5.2f}    {100 * aa:8.1f}%          {100 * fg:6.1f}%      {100 * an:6.1f}%         "
              f"{100 * am:6.1f}%")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", type=Path, help="where answer_bench keeps its stores (default: a temp dir)")
    ap.add_argument("--l2", type=float, default=1.0, help="the L2 penalty on the standardised weights")
    ap.add_argument("--features", default=",".join(f for f in FEATURES if f not in LEFT_OUT),
                    help="the features the model may use (default: all but " + ", ".join(LEFT_OUT) + ")")
    ap.add_argument("--folds", type=int, default=5, help="cross-validation folds over the dev questions")
    ap.add_argument("--near-weight", type=float, default=3.0, help="how much a near miss weighs in the question model")
    ap.add_argument("--question-only", action="store_true", help="fit the question-level model only")
    ap.add_argument("--question-features", default=",".join(QUESTION_FEATURES),
                    help="the features the question-level model may use (default: all)")
    args = ap.parse_args()
    use_question = np.array([name in args.question_features.split(",") for name in QUESTION_FEATURES])
    use = np.array([name in args.features.split(",") for name in FEATURES])
    with tempfile.TemporaryDirectory() as tmp:
        rows = collect(args.workdir or Path(tmp))
    if args.question_only:
        fit_question_model(rows, args.l2, args.near_weight, args.folds, use_question)
        return 0
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
    print()
    fit_question_model(rows, args.l2, args.near_weight, args.folds, use_question)
    return 0


if __name__ == "__main__":
    sys.exit(main())
