"""SquareCB's defaults by the evidence protocol: tune, validate, starvation, drift.

Four sub-commands (streams and seeds from ``benchmarks/streams.py``):

``tune``
    Every point of a grid of SquareCB parameters on the TUNING streams, seeds
    0..S-1. Score of a stream: the mean over seeds of SquareCB's online error
    divided by Vowpal Wabbit's best online error of its five ``vw-cbify``
    configurations on the same stream and seed. **Rule**: the defaults are the
    grid point with the smallest worst score over the tuning streams, ties (within
    0.005) broken by the smallest mean score. Only TUNING is read.
``report``
    ``SquareCB()`` at its defaults (or ``--params``) on the VALIDATION and
    ``vw-cbify`` streams: per stream the mean ratio and every seed's ratio.
``starvation``
    Per class over ``--seeds`` seeds on the shared real streams (the vw-cbify
    order permuted per seed): rounds where the class was played, and the greedy
    accuracy on the class's own rows in the second half of the stream.
``drift``
    SynNonSep whose prototypes are redrawn every ``--drift-every`` rounds
    (``streams.drifting_synnonsep_chunks``): online error per segment.

    python benchmarks/robust_defaults.py tune --seeds 3
    python benchmarks/robust_defaults.py report --seeds 3
    python benchmarks/robust_defaults.py starvation --seeds 10
    python benchmarks/robust_defaults.py drift --n-rounds 5000000 --drift-every 1000000

VW's errors are cached in ``docs/results/robust-defaults/vw_best.json``
(``--vw-cache``); the learners' runs are not cached.
"""

from __future__ import annotations

import argparse
import ast
import itertools
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from streams import SUITES, drifting_synnonsep_chunks, load_stream, vw_best  # noqa: E402

from skbandit import BanditFeedback, SquareCB  # noqa: E402

HERE = os.path.dirname(__file__)
VW_CACHE = os.path.join(
    HERE, "..", "docs", "results", "robust-defaults", "vw_best.json"
)


def _error(params, X, y, seed):
    est = SquareCB(random_state=seed).set_params(**params)
    est.partial_fit(X, y, classes=np.unique(y))
    return est.n_mistakes_ / est.t_


def ratios(suite, params_list, seeds, data_dir, cache):
    """{params index: {stream: [ratio per seed]}} on one suite."""
    out = {i: {} for i in range(len(params_list))}
    for stream in SUITES[suite]:
        for seed in seeds:
            X, y = load_stream(stream.name, seed, suite=suite, data_dir=data_dir)
            vw = vw_best(stream.name, suite, seed, X, y, cache=cache)
            for i, params in enumerate(params_list):
                err = _error(params, X, y, seed)
                out[i].setdefault(stream.name, []).append(err / vw)
    return out


def _fmt_params(p):
    return " ".join(
        f"{k}={v}" if isinstance(v, bool) else f"{k}={v:g}" for k, v in p.items()
    )


def cmd_tune(a):
    keys = (
        "exploration__scale",
        "exploration__exponent",
        "learning_rate",
        "initial_reward",
        "shared_scale",
    )
    grid = [
        dict(zip(keys, g, strict=True))
        for g in itertools.product(
            a.exploration_scale,
            a.exploration_exponent,
            a.learning_rate,
            a.initial_reward,
            [bool(v) for v in a.shared_scale],
        )
    ]
    r = ratios("tuning", grid, range(a.seeds), a.data_dir, a.vw_cache)
    rows = []
    for i, per in r.items():
        means = {k: float(np.mean(v)) for k, v in per.items()}
        rows.append(
            (max(means.values()), float(np.mean(list(means.values()))), i, means)
        )
    best_worst = min(row[0] for row in rows)
    tied = [row for row in rows if row[0] <= best_worst + 0.005]
    rest = [row for row in rows if row[0] > best_worst + 0.005]
    rows = sorted(tied, key=lambda row: row[1]) + sorted(rest, key=lambda r: r[:2])
    names = list(rows[0][3])
    print(f"TUNING streams, seeds 0..{a.seeds - 1}: mean ratio to VW's best per stream")
    print(
        "rule: smallest worst ratio (ties within 0.005 by the mean); first row chosen"
    )
    print(f"{'params':<86} worst   mean  " + " ".join(f"{n[:10]:>10}" for n in names))
    for worst, mean, i, means in rows:
        print(
            f"{_fmt_params(grid[i]):<86} {worst:.3f}  {mean:.3f}  "
            + " ".join(f"{means[n]:>10.3f}" for n in names)
        )
    return 0


def cmd_report(a):
    params = ast.literal_eval(a.params) if a.params else {}
    print(f"SquareCB({_fmt_params(params)}), seeds 0..{a.seeds - 1}")
    for suite in a.suites:
        r = ratios(suite, [params], range(a.seeds), a.data_dir, a.vw_cache)[0]
        print(f"== {suite}: ratio of online error to VW's best (per stream and seed)")
        print(f"{'stream':>20}   mean    max  seeds")
        for name, v in r.items():
            flag = "" if np.mean(v) <= 1.0 and max(v) <= 1.10 else "  <- target missed"
            print(
                f"{name:>20}  {np.mean(v):.3f}  {max(v):.3f}  "
                + " ".join(f"{x:.3f}" for x in v)
                + flag
            )
    return 0


def cmd_starvation(a):
    params = ast.literal_eval(a.params) if a.params else {}
    print(
        f"SquareCB({_fmt_params(params)}): per class over {a.seeds} seeds (order "
        "seed s, learner seed s): rounds played (mean, min) and greedy accuracy on "
        "the class's own rows in the second half (mean, min); last column: the "
        "same accuracy of a full-information linear model in hindsight "
        "(scikit-learn LogisticRegression fitted on the first half, seed 0's order)"
    )
    for name in ("usps", "mnist", "covtype", "20newsgroups-tfidf"):
        X0, y0 = load_stream(name, 0, suite="vw-cbify", data_dir=a.data_dir)
        classes = np.unique(y0)
        played, acc = [], []
        for seed in range(a.seeds):
            order = np.random.default_rng(seed).permutation(len(y0))
            X, y = X0[order], y0[order]
            est = SquareCB(random_state=seed).set_params(**params)
            half = len(y) // 2
            est.partial_fit(X[:half], BanditFeedback(y[:half]), classes=classes)
            greedy = []
            for lo in range(half, len(y), 1):
                greedy.append(est.predict(X[lo : lo + 1])[0])
                est.partial_fit(X[lo : lo + 1], BanditFeedback(y[lo : lo + 1]))
            greedy = np.asarray(greedy)
            played.append(est.n_updates_.copy())
            acc.append([float(np.mean(greedy[y[half:] == c] == c)) for c in classes])
        played, acc = np.array(played), np.array(acc)
        full = _full_information_accuracy(X0, y0, classes)
        print(f"== {name} (n={len(y0)})")
        print(
            "class  rows  played mean   min   greedy acc 2nd half mean   min"
            "   full-info"
        )
        for j, c in enumerate(classes):
            print(
                f"{c!s:>5} {np.sum(y0 == c):>5d}  {played[:, j].mean():>11.0f} "
                f"{played[:, j].min():>5d}   {acc[:, j].mean():>22.3f} "
                f"{acc[:, j].min():>5.3f}   {full[j]:>9.3f}"
            )
    return 0


def _full_information_accuracy(X, y, classes):
    """Per-class accuracy on the second half of a linear classifier fitted with
    full information on the first half (what a linear model can reach)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MaxAbsScaler

    half = len(y) // 2
    clf = make_pipeline(MaxAbsScaler(), LogisticRegression(max_iter=2000))
    pred = clf.fit(X[:half], y[:half]).predict(X[half:])
    yh = y[half:]
    return [
        float(np.mean(pred[yh == c] == c)) if np.any(yh == c) else np.nan
        for c in classes
    ]


def cmd_drift(a):
    params = ast.literal_eval(a.params) if a.params else {}
    for seed in range(a.seeds):
        est = SquareCB(random_state=seed).set_params(**params)
        errs, start = [], time.perf_counter()
        for X, y in drifting_synnonsep_chunks(
            a.n_rounds, a.drift_every, random_state=seed
        ):
            m0 = getattr(est, "n_mistakes_", 0)
            est.partial_fit(X, y, classes=range(9))
            errs.append((est.n_mistakes_ - m0) / len(y))
        worst = max(errs[1:]) / errs[0] if len(errs) > 1 else float("nan")
        print(
            f"SquareCB({_fmt_params(params)}) seed {seed}: error per segment "
            + " ".join(f"{e:.4f}" for e in errs)
            + f"; worst later / first {worst:.3f} ({time.perf_counter() - start:.0f} s)"
        )
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("command", choices=("tune", "report", "starvation", "drift"))
    p.add_argument("--data-dir", default=None)
    p.add_argument("--vw-cache", default=VW_CACHE)
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--params", default=None, help="a dict literal of SquareCB params")
    # the inverse-gap-weighting schedule (SquareCB's InverseGap(scale, exponent))
    p.add_argument(
        "--exploration-scale", type=float, nargs="+", default=[30, 100, 300, 1000]
    )
    p.add_argument("--exploration-exponent", type=float, nargs="+", default=[0.5, 1.0])
    p.add_argument("--learning-rate", type=float, nargs="+", default=[0.25, 0.5, 1.0])
    p.add_argument("--initial-reward", type=float, nargs="+", default=[1.0])
    p.add_argument("--shared-scale", type=int, nargs="+", choices=(0, 1), default=[1])
    p.add_argument("--suites", nargs="+", default=["validation", "vw-cbify"])
    p.add_argument("--n-rounds", type=int, default=5_000_000)
    p.add_argument("--drift-every", type=int, default=1_000_000)
    a = p.parse_args(argv)
    return {
        "tune": cmd_tune,
        "report": cmd_report,
        "starvation": cmd_starvation,
        "drift": cmd_drift,
    }[a.command](a)


if __name__ == "__main__":
    sys.exit(main())
