"""Evidence for Gaptron's default step size: one pass, online error.

Usage: python run.py [DATA_DIR]  (default ../shared/data from the repository
root; writes results.csv beside this script; about 5 minutes on one core)

Every setting of the grid below plays each stream once, in the experiments'
fixed order, for seeds 0-4 (``partial_fit`` over the whole stream: the online
error ``n_mistakes_ / t_`` the papers report). The streams are split in two:

- ``TUNING``: the streams the default is chosen on (``select.py --streams``);
- ``HELD_OUT``: streams not used for choosing, on which the choice is reported
  (the same kinds of data: digits images, text, a separable synthetic stream).

``digits16`` is scikit-learn's ``load_digits`` with pixels / 16 (in [0, 1]),
shuffled once with seed 0: the first try of a new user.
"""

from __future__ import annotations

import csv
import json
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits

from skbandit import Gaptron
from skbandit.experiments import load_dataset
from skbandit.experiments._specs import upgrade_params
from skbandit.exploration import GapMap

TUNING = ["usps", "covtype", "20newsgroups", "synnonsep"]
HELD_OUT = ["mnist", "20newsgroups-tfidf", "synsep", "digits16"]
SEEDS = range(5)
N_SAMPLES = 100_000  # the generated streams; the real ones are smaller
GAMMAS = [2.0**-i for i in range(8, 0, -1)]
SCALES = [4.0**i for i in range(7)]  # AdaGrad-norm's B: 1 ... 4096


def settings():
    for gamma in GAMMAS:
        yield {"gamma": gamma, "learning_rate": "auto"}
        for scale in SCALES:
            yield {"gamma": gamma, "learning_rate": "adagrad", "adagrad_scale": scale}


def stream(name, data_dir):
    if name == "digits16":
        X, y = load_digits(return_X_y=True)
        order = np.random.default_rng(0).permutation(len(y))
        return X[order] / 16.0, y[order]
    return load_dataset(name, N_SAMPLES, data_dir=data_dir, download=False)


def main(data_dir):
    out = Path(__file__).with_name("results.csv")
    with out.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(
            ["dataset", "split", "learner", "name", "params", "seed", "rounds",
             "error", "greedy_error", "uniform_error"]
        )  # fmt: skip
        for name in TUNING + HELD_OUT:
            X, y = stream(name, data_dir)
            classes = np.unique(y)
            uniform = 1.0 - 1.0 / classes.shape[0]
            split = "tuning" if name in TUNING else "held-out"
            for params in settings():
                for seed in SEEDS:
                    with warnings.catch_warnings():
                        # rows beyond x_norm_bound (learning_rate="auto" only)
                        warnings.simplefilter("ignore", UserWarning)
                        # the recorded name: gamma, the gap map's epsilon
                        rest = {k: v for k, v in params.items() if k != "gamma"}
                        # (recorded under the names of the time: translated)
                        est = Gaptron(
                            exploration=GapMap(params["gamma"]),
                            random_state=seed,
                        ).set_params(**upgrade_params("Gaptron", rest))
                        est.partial_fit(X, y, classes=classes)
                    writer.writerow(
                        [name, split, "Gaptron", "Gaptron", json.dumps(params),
                         seed, est.t_, f"{est.n_mistakes_ / est.t_:.6f}",
                         f"{est.n_greedy_mistakes_ / est.t_:.6f}", f"{uniform:.6f}"]
                    )  # fmt: skip
            print(name, "done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/data")
