"""Stream a digits data set through a bandit learner and its full-information twin.

Each row is played once, in order (progressive validation): the learner
predicts, is told only whether it was right, and updates. The printed
*online error* is the fraction of rounds whose played action was wrong, the
figure the papers report. The Banditron explores with probability ``gamma``,
so its greedy (exploitation) error is printed too.

Run with the built-in scikit-learn digits (no download)::

    python examples/quickstart.py

or on USPS from a local copy (``npz`` with X_train, y_train, X_test, y_test)::

    python examples/quickstart.py --usps ../shared/data/usps.npz --epsilon 0.3
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.datasets import load_digits

from skbandit import BanditFeedback, Banditron, MulticlassPerceptron
from skbandit.exploration import EpsilonGreedy


def load_stream(usps: str | None) -> tuple[np.ndarray, np.ndarray, str]:
    """Rows and labels in stream order, pixels scaled to [0, 1]."""
    if usps is None:
        X, y = load_digits(return_X_y=True)
        return X / 16.0, y, "sklearn digits (1,797 x 64)"
    with np.load(usps) as data:
        X = np.vstack([data["X_train"], data["X_test"]]).astype(np.float64)
        y = np.concatenate([data["y_train"], data["y_test"]])
    return X, y, f"USPS {usps} ({X.shape[0]:,} x {X.shape[1]})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--usps", help="path to usps.npz (default: sklearn digits)")
    parser.add_argument(
        "--epsilon", type=float, default=0.1, help="Banditron's exploration rate γ"
    )
    parser.add_argument("--seeds", type=int, default=5, help="Banditron repetitions")
    args = parser.parse_args(argv)

    X, y, name = load_stream(args.usps)
    classes = np.unique(y)
    print(f"stream: {name}, {classes.size} classes, one pass in file order\n")
    print(f"{'learner':<34}{'online error':>14}{'greedy error':>14}{'rounds/s':>12}")

    learners = [("MulticlassPerceptron (full info)", MulticlassPerceptron, {}, [0])]
    learners.append(
        (
            f"Banditron (epsilon={args.epsilon:g})",
            Banditron,
            {"exploration": EpsilonGreedy(args.epsilon)},
            list(range(args.seeds)),
        )
    )
    for label, cls, params, seeds in learners:
        errors, greedy_errors, speed = [], [], []
        for seed in seeds:
            feedback = BanditFeedback(y)
            clf = cls(random_state=seed, **params)
            start = time.perf_counter()
            clf.partial_fit(X, feedback, classes=classes)
            speed.append(clf.t_ / (time.perf_counter() - start))
            errors.append(clf.n_mistakes_ / clf.t_)
            greedy_errors.append(clf.n_greedy_mistakes_ / clf.t_)
            # What the learner saw: one bit per round.
            assert feedback.n_rounds_ == len(y)
        spread = f"±{np.std(errors):.3f}" if len(seeds) > 1 else ""
        print(
            f"{label:<34}{np.mean(errors):>8.3f}{spread:>6}"
            f"{np.mean(greedy_errors):>14.3f}{np.median(speed):>12,.0f}"
        )
    print(
        "\nonline error = played-action mistakes / rounds; "
        f"mean{' ± std' if args.seeds > 1 else ''} over {args.seeds} seeds "
        "for the Banditron."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
