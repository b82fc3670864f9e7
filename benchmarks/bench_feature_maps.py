"""Rounds per second of ``BanditPipeline``'s compiled feature maps, and what
they learn.

Part 1, speed: one ``partial_fit`` call over a seeded dense Gaussian stream of
``d`` features and ``k`` classes (``--n-rounds`` rows), best of ``--repeat``,
for

* ``SquareCB()`` on the raw rows (the linear reference);
* ``[OnlineStandardScaler, RBFSampler(n_components=D, gamma=1/d), SquareCB()]``
  (running standardisation and ``D`` random Fourier features in the kernel);
* ``OnlineSelector(candidates=default_candidates() + [that pipeline])``, the
  selector of the four linear candidates ``OnlineSelector(candidates=
  default_candidates())``, the default ``OnlineSelector()`` (its nonlinear
  candidate, the standardised row beside ``D = 1000`` random features of
  it, first where ``d <= 256``) and the default before the row was put
  beside the features (``nonlinear_ideas.previous_nonlinear_candidate``).

Part 2, online error (one pass, mean over ``--seeds`` seeds): linear
``SquareCB()`` against the pipeline on nonlinear streams:
``make_classification`` with several Gaussian clusters per class, and the
digits (``load_digits``, rows repeated in a new order to make a longer stream).

    python benchmarks/bench_feature_maps.py          # default run, a few minutes
    python benchmarks/bench_feature_maps.py --n-rounds 500 --repeat 1 --seeds 1 \\
        --dims 16 --components 64 --no-selector               # smoke run
    python benchmarks/compare_release.py --ref main \\
        --script bench_feature_maps.py -- --no-error  # against main, alternating

``--json PATH`` writes part 1's rows (learner, input, rounds/s, online
error), the report ``compare_release.py`` reads.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from nonlinear_ideas import previous_nonlinear_candidate
from sklearn.datasets import load_digits, make_classification
from sklearn.kernel_approximation import RBFSampler

from skbandit import OnlineSelector, SquareCB
from skbandit.multiclass._selector import default_candidates
from skbandit.pipeline import make_bandit_pipeline
from skbandit.preprocessing import OnlineStandardScaler


def rff_pipeline(n_components: int, d: int, seed: int):
    """The measured pipeline: standardisation, ``D`` random features with
    ``gamma = 1 / d``, ``SquareCB()``."""
    return make_bandit_pipeline(
        OnlineStandardScaler(),
        RBFSampler(n_components=n_components, gamma=1.0 / d, random_state=seed),
        SquareCB(),
        random_state=seed,
    )


def gaussian_stream(n: int, d: int, k: int, seed: int):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = rng.integers(0, k, size=n)
    return X, y


def rounds_per_second(make, X, y, k: int, repeat: int) -> tuple[float, float]:
    """The best rounds/s over ``repeat`` fresh learners, and their online
    error (mistakes / rounds; the same on every pass of a seeded learner)."""
    best = np.inf
    for _ in range(repeat):
        est = make()
        start = time.perf_counter()
        est.partial_fit(X, y, classes=np.arange(k))
        best = min(best, time.perf_counter() - start)
    return X.shape[0] / best, est.n_mistakes_ / est.t_


def speed(args) -> list[dict]:
    """Part 1; its rows in the records of ``_harness.Result`` (``learner``,
    ``input``, ``status``, ``rounds_per_s``, ``online_error``), which
    ``compare_release.py`` reads from ``--json``."""
    results = []
    print(
        f"Rounds/s, one partial_fit over {args.n_rounds} dense rows, k = {args.k}, "
        f"best of {args.repeat}"
    )
    print(f"{'learner':<58} {'d':>4} {'D':>5} {'rounds/s':>10}")
    for d in args.dims:
        X, y = gaussian_stream(args.n_rounds, d, args.k, 0)
        rows = [("SquareCB() (linear)", None, lambda: SquareCB(random_state=0))]
        if args.selector:
            rows.append(
                (
                    "OnlineSelector(default_candidates()) (linear only)",
                    None,
                    lambda: OnlineSelector(
                        candidates=default_candidates(), random_state=0
                    ),
                )
            )
            n_default = len(default_candidates(d, args.k))
            rows.append(
                (
                    "OnlineSelector() (the default)",
                    1000 if n_default > len(default_candidates()) else None,
                    lambda: OnlineSelector(random_state=0),
                )
            )
            if n_default > len(default_candidates()):
                rows.append(
                    (
                        "OnlineSelector() before the row beside its features",
                        1000,
                        lambda d=d: OnlineSelector(
                            candidates=[
                                previous_nonlinear_candidate(),
                                *default_candidates(d, args.k)[1:],
                            ],
                            random_state=0,
                        ),
                    )
                )
        for D in args.components:
            rows.append(
                (
                    "[OnlineStandardScaler, RBFSampler, SquareCB()]",
                    D,
                    lambda D=D, d=d: rff_pipeline(D, d, 0),
                )
            )
            if args.selector:
                rows.append(
                    (
                        "OnlineSelector(default_candidates() + [pipeline])",
                        D,
                        lambda D=D, d=d: OnlineSelector(
                            candidates=[*default_candidates(), rff_pipeline(D, d, 0)],
                            random_state=0,
                        ),
                    )
                )
        for name, D, make in rows:
            rate, err = rounds_per_second(make, X, y, args.k, args.repeat)
            print(f"{name:<58} {d:>4} {'-' if D is None else D:>5} {rate:>10,.0f}")
            results.append(
                {
                    "learner": name if D is None else f"{name} D={D}",
                    "input": f"dense d={d}",
                    "rounds": args.n_rounds,
                    "status": "ok",
                    "rounds_per_s": rate,
                    "online_error": err,
                }
            )
    return results


def streams(args):
    """(name, X, y) of the nonlinear streams."""
    out = []
    for seed in range(args.seeds):
        X, y = make_classification(
            n_samples=args.n_error, n_features=16, n_informative=10, n_redundant=2,
            n_classes=5, n_clusters_per_class=4, class_sep=2.0, random_state=seed,
        )  # fmt: skip
        out.append(("make_classification d=16 k=5, 4 clusters/class", X, y, seed))
    Xd, yd = load_digits(return_X_y=True)
    for seed in range(args.seeds):
        order = np.random.default_rng(seed).integers(0, Xd.shape[0], args.n_error)
        out.append(("digits (rows redrawn)", Xd[order], yd[order], seed))
    return out


def error(args) -> None:
    D = args.error_components
    print(
        f"\nOnline error of one pass ({args.n_error} rounds), mean over "
        f"{args.seeds} seed(s); pipeline: scaler + RBFSampler(D={D}, gamma=1/d)"
    )
    print(f"{'stream':<50} {'SquareCB()':>11} {'pipeline':>9}")
    results: dict[str, list[tuple[float, float]]] = {}
    for name, X, y, seed in streams(args):
        k = int(y.max()) + 1
        lin = SquareCB(random_state=seed).partial_fit(X, y, classes=np.arange(k))
        pipe = rff_pipeline(D, X.shape[1], seed).partial_fit(X, y, classes=np.arange(k))
        results.setdefault(name, []).append(
            (lin.n_mistakes_ / lin.t_, pipe.n_mistakes_ / pipe.t_)
        )
    for name, pairs in results.items():
        lin, pipe = np.mean(pairs, axis=0)
        print(f"{name:<50} {lin:>11.3f} {pipe:>9.3f}")


def parse(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ints = lambda s: [int(v) for v in s.split(",")]  # noqa: E731
    parser.add_argument("--n-rounds", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--dims", type=ints, default=[16, 64])
    parser.add_argument("--components", type=ints, default=[256, 512, 1000])
    parser.add_argument("--no-selector", dest="selector", action="store_false")
    parser.add_argument("--n-error", type=int, default=10_000)
    parser.add_argument("--error-components", type=int, default=1000)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument(
        "--no-error", dest="error", action="store_false", help="skip part 2"
    )
    parser.add_argument(
        "--json", help="write part 1's rows here (for compare_release.py)"
    )
    return parser.parse_args(argv)


def main(argv=None) -> None:
    args = parse(argv)
    results = speed(args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "results": results}, f, indent=2)
        print(f"wrote {args.json}")
    if args.error:
        error(args)


if __name__ == "__main__":
    main()
