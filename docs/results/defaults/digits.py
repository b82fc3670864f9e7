"""Training accuracy on scikit-learn's digits after ``fit``, seeds 0-4.

Usage: python digits.py  (writes digits.csv beside this script, a few minutes)

A new user's first try: ``Learner(random_state=seed).fit(X, y).score(X, y)``
on ``load_digits`` (1,797 rows, 64 pixels in 0..16; ``fit`` makes 5 shuffled
passes), on the raw pixels and on pixels / 16, for the defaults of this
version, the previous defaults and the exploration grid 2^-10 ... 2^-1;
seeds 0-19 (the issue quoted seeds 0-4).

The settings keep the names of the recorded ``digits.csv`` (``gamma``, the
offset tree's ``exploration``, Gaptron's ``learning_rate``); ``_make``
translates them to today's parameters.
"""

from __future__ import annotations

import csv
import warnings
from pathlib import Path

from sklearn.datasets import load_digits

import skbandit
from skbandit.experiments._renames import upgrade_params

GRID = [2.0**-i for i in range(10, 0, -1)]
SEEDS = range(20)


def settings():
    yield "Banditron", {}
    yield "SOBA", {}
    yield "PNewtron", {}
    yield "Gaptron", {}
    yield "OffsetTree", {}
    for g in GRID:
        yield "Banditron", {"gamma": g}
        yield "SOBA", {"gamma": g}
        yield "PNewtron", {"gamma": g}
        for eta in ("auto", "adagrad"):
            yield "Gaptron", {"gamma": g, "learning_rate": eta}
        for C in (0.01, 1.0):
            yield "OffsetTree", {"exploration": g, "C": C}
    for g in (2.0**-14, 2.0**-12):
        for C in (0.0001, 0.01, 1.0):
            yield "OffsetTree", {"exploration": g, "C": C}
    yield "SOBA", {"gamma": "adaptive"}
    # the previous defaults
    yield "Banditron", {"gamma": 0.05}
    yield "SOBA", {"gamma": 0.01}
    yield "PNewtron", {"gamma": 0.01}
    yield "Gaptron", {"gamma": 0.05}
    yield "OffsetTree", {"exploration": 0.1, "C": 1.0}


def _make(name, params, seed):
    """The learner of a recorded setting, its names translated to today's
    (``skbandit.experiments._renames.upgrade_params``: ``gamma`` and a number
    given as ``exploration`` are the ``epsilon`` of the default rule; Gaptron's
    ``learning_rate`` is its ``step_size``)."""
    est = getattr(skbandit, name)(random_state=seed)
    return est.set_params(**upgrade_params(name, params))


def main():
    X, y = load_digits(return_X_y=True)
    out = Path(__file__).with_name("digits.csv")
    with out.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["learner", "params", "scale", "seed", "accuracy"])
        for name, params in settings():
            for scale in (1, 16):
                for seed in SEEDS:
                    with warnings.catch_warnings():
                        # Gaptron warns once when rows exceed x_norm_bound
                        warnings.simplefilter("ignore", UserWarning)
                        est = _make(name, params, seed)
                        acc = est.fit(X / scale, y).score(X / scale, y)
                    label = ", ".join(f"{k}={v!r}" for k, v in params.items())
                    writer.writerow(
                        [name, label or "default", scale, seed, f"{acc:.4f}"]
                    )


if __name__ == "__main__":
    main()
