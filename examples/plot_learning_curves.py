"""Progressive validation: a bandit learner beside full-information models.

Streams SynNonSep (Kakade et al. 2008; 5% label noise) through skbandit's
Banditron and SOBA-diag (bandit feedback: one round per row) and through
scikit-learn's Perceptron and SGDClassifier (full information, mini-batches of
100 rows: each chunk is predicted, then learned), prints the online errors and,
when matplotlib is installed, writes the learning curves to a PNG.

Run: ``python examples/progressive_validation.py [--n-samples N] [--out FILE]``.
"""

from __future__ import annotations

import argparse

from sklearn.linear_model import Perceptron, SGDClassifier

import skbandit
from skbandit.datasets import make_synnonsep
from skbandit.evaluation import compare, plot_learning_curves


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=100_000)
    parser.add_argument("--out", default=None, help="PNG file of the curves")
    args = parser.parse_args()

    X, y = make_synnonsep(args.n_samples, sparse=True, random_state=0)
    learners = {"Banditron": skbandit.Banditron(gamma=2**-5, random_state=0)}
    if hasattr(skbandit, "SOBA"):  # present once the SOBA learner has landed
        learners["SOBA-diag"] = skbandit.SOBA(gamma=2**-5, random_state=0)
    learners["Perceptron (sklearn)"] = Perceptron(random_state=0)
    learners["SGD log-loss (sklearn)"] = SGDClassifier(loss="log_loss", random_state=0)
    results = compare(learners, X, y, chunk_size=100, progress=True)
    print(results)
    if args.out:
        ax = plot_learning_curves(results)
        ax.figure.savefig(args.out, dpi=110)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
