"""Online error and rounds/s of ``RegressionReduction`` beside ``SquareCB()``.

On generated nonlinear streams (no download), one pass, seeds 0..S-1, the
online error ``n_mistakes_ / t_`` and the rounds per second of one
``partial_fit`` call over the stream:

- ``xor-d8``: the class of a row is the parity pattern of the signs of its
  first three coordinates (8 regions, 4 classes: XOR in 8 dimensions, the
  other 5 coordinates noise), rows standard normal;
- ``clusters-k5``: ``make_classification`` with 3 Gaussian clusters per class,
  16 features (10 informative), standardised;
- ``circles-k3``: three concentric rings in 2 dimensions plus 6 noise
  coordinates (no linear separator).

Learners: ``SquareCB()`` (linear, compiled); ``RegressionReduction`` with a
one-hidden-layer ``MLPRegressor`` (multi-output, ``per_class=False``) at
batch sizes 1, 8 and 64; with its default per-class ``SGDRegressor`` on 500
random Fourier features (``RBFSampler``, gamma = 1 / d, applied to the whole
stream first: a fixed map) at batch sizes 32 and 1, and at batch size 1 the
same regressor under a subclass, which the reduction asks for ``predict``
(``SGDRegressor`` itself has its outputs computed from its coefficients: the
same plays, the cost of ``predict``'s validation saved); and, for the limit bandit
feedback approaches, the full-information online error of the same MLP
(``MLPRegressor`` trained on one-hot labels, predicting before learning each
mini-batch of 8).

    python benchmarks/bench_regression_reduction.py              # ~2 minutes
    python benchmarks/bench_regression_reduction.py --n 20000 --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.datasets import make_circles, make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_approximation import RBFSampler
from sklearn.linear_model import SGDRegressor
from sklearn.neural_network import MLPRegressor
from sklearn.preprocessing import StandardScaler

from skbandit import RegressionReduction, SquareCB
from skbandit.multiclass._regression_models import _default_regressor


def xor_stream(n: int, seed: int):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 8))
    signs = (X[:, :3] > 0).astype(int)
    y = (signs[:, 0] ^ signs[:, 1]) + 2 * (signs[:, 1] ^ signs[:, 2])
    return X, y


def clusters_stream(n: int, seed: int):
    X, y = make_classification(
        n, 16, n_informative=10, n_redundant=2, n_classes=5,
        n_clusters_per_class=3, class_sep=1.5, random_state=seed,
    )  # fmt: skip
    return StandardScaler().fit_transform(X), y


def circles_stream(n: int, seed: int):
    rng = np.random.default_rng(seed)
    X1, y1 = make_circles(n, factor=0.5, noise=0.05, random_state=seed)
    # a third ring: the inner ring's points scaled down
    inner = rng.random(n) < 1 / 3
    X1[inner & (y1 == 1)] *= 0.4
    y = np.where(inner & (y1 == 1), 2, y1)
    X = np.hstack([X1 * 2.0, rng.standard_normal((n, 6)) * 0.5])
    return X, y


STREAMS = {
    "xor-d8": xor_stream,
    "clusters-k5": clusters_stream,
    "circles-k3": circles_stream,
}


def mlp(seed: int) -> MLPRegressor:
    return MLPRegressor(
        hidden_layer_sizes=(64,), learning_rate_init=0.01, random_state=seed
    )


def learners(d: int):
    """``(name, make(seed), transform)`` of each learner (transform: a fixed
    map of the whole stream, or None)."""

    def rff(seed):
        return RBFSampler(gamma=1.0 / d, n_components=500, random_state=seed)

    out = [("SquareCB() linear", lambda s: SquareCB(random_state=s), None)]
    for batch in (1, 8, 64):
        out.append(
            (
                f"MLP(64) multi-output, batch {batch}",
                lambda s, b=batch: RegressionReduction(
                    estimator=mlp(s), per_class=False, batch_size=b, random_state=s
                ),
                None,
            )
        )
    out.append(
        (
            "SGD per class on RFF(500), batch 32",
            lambda s: RegressionReduction(batch_size=32, random_state=s),
            rff,
        )
    )
    out.append(
        (
            "SGD per class on RFF(500), batch 1",
            lambda s: RegressionReduction(random_state=s),
            rff,
        )
    )
    out.append(
        (
            "  the same, asked for predict",
            lambda s: RegressionReduction(
                estimator=AskedSGD(**_default_regressor().get_params()),
                random_state=s,
            ),
            rff,
        )
    )
    return out


class AskedSGD(SGDRegressor):
    """The default regressor's settings under another class: the reduction
    asks it for ``predict`` each round (as any other regressor), where
    ``SGDRegressor`` itself has its outputs computed from ``coef_`` and
    ``intercept_``; the same plays, so the two rows' errors are equal (its
    parameters are ``SGDRegressor``'s: the reduction seeds it alike)."""


def full_information_mlp(X, y, seed: int, batch: int = 8) -> float:
    """Online error of the same MLP with the labels (one-hot targets), each
    mini-batch predicted before it is learned."""
    k = int(y.max()) + 1
    model = mlp(seed)
    Y = np.eye(k)[y]
    mistakes = 0
    for lo in range(0, X.shape[0], batch):
        hi = min(lo + batch, X.shape[0])
        if lo > 0:
            mistakes += int(np.sum(model.predict(X[lo:hi]).argmax(1) != y[lo:hi]))
        else:
            mistakes += hi - lo  # nothing learned yet: count as wrong
        model.partial_fit(X[lo:hi], Y[lo:hi])
    return mistakes / X.shape[0]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000, help="rounds per stream")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument(
        "--max-rounds-batch1", type=int, default=3000,
        help="rounds of the batch-1 MLP (the slowest case)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", ConvergenceWarning)
    print(
        f"one pass of {args.n} rounds, seeds {args.seeds}; "
        "error = n_mistakes_ / t_ (mean over seeds); rounds/s of one partial_fit"
    )
    for name, make_stream in STREAMS.items():
        print(f"\n{name}")
        print(f"  {'learner':<40} {'error':>7} {'rounds/s':>10}")
        rows = {}
        for seed in args.seeds:
            X, y = make_stream(args.n, seed)
            classes = np.unique(y)
            for label, make, transform in learners(X.shape[1]):
                Xs = X if transform is None else transform(seed).fit_transform(X)
                n = args.n
                if label.startswith("MLP") and label.endswith("batch 1"):
                    n = min(n, args.max_rounds_batch1)
                est = make(seed)
                start = time.perf_counter()
                est.partial_fit(Xs[:n], y[:n], classes=classes)
                seconds = time.perf_counter() - start
                rows.setdefault(label, []).append(
                    (est.n_mistakes_ / est.t_, n / seconds)
                )
            full = full_information_mlp(X, y, seed)
            rows.setdefault("full information MLP(64), batch 8", []).append(
                (full, float("nan"))
            )
        for label, values in rows.items():
            err = np.mean([v[0] for v in values])
            speed = np.mean([v[1] for v in values])
            speed_txt = "" if np.isnan(speed) else f"{speed:10.0f}"
            print(f"  {label:<40} {err:7.3f} {speed_txt:>10}")


if __name__ == "__main__":
    main()
