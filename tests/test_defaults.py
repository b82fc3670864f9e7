"""The defaults chosen from evidence learn scikit-learn's digits on a first try.

The defaults were chosen on six one-pass streams (docs/experiments.md, "Defaults
from evidence"); this is the check the issue asked for: a new user's
``Learner(random_state=seed).fit(X, y).score(X, y)`` on ``load_digits`` for
seeds 0-4. Under the previous defaults the minimum over these seeds was 0.26
(Banditron, gamma 0.05), 0.10 (SOBA, 0.01), 0.33 (PNewtron, 0.01), 0.85
(Gaptron, gamma 0.05, pixels / 16) and 0.23 (OffsetTree, C 1, exploration 0.1,
pixels / 16); with the new ones 0.74, 0.81, 0.84, 0.90 and 0.77
(docs/results/defaults/digits.csv, which also has seeds 5-19). Each threshold
lies between the two, a few points below the new minimum, so that putting the
previous default back fails the test. Gaptron's step default was changed
later (docs/results/defaults/gaptron-step): its online error is checked
below; after five passes its predictions (the averaged weights) are less
accurate (0.65 to 0.76 on pixels / 16 for seeds 0-4, from 0.90 to 0.92 with
the theory's step), which its threshold records.

The learners whose step depends on the scale of the rows (Gaptron's theory
step assumes ``||x|| <= x_norm_bound = 1``; OffsetTree's PA-I cap ``C ω`` is
compared with ``l / ||x||²``) are checked on pixels / 16, the scale their
docstrings ask for; the Banditron (scale-free), SOBA and PNewtron on the raw
pixels, as in the issue.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits

from skbandit import SOBA, Banditron, Gaptron, OffsetTree, PNewtron


@pytest.fixture(scope="module")
def digits():
    return load_digits(return_X_y=True)


@pytest.mark.parametrize(
    ("cls", "scale", "threshold"),
    [
        (Banditron, 1.0, 0.70),
        (SOBA, 1.0, 0.75),
        (PNewtron, 1.0, 0.80),
        (Gaptron, 16.0, 0.55),
        (OffsetTree, 16.0, 0.70),
    ],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
def test_default_training_accuracy_on_digits(digits, cls, scale, threshold):
    X, y = digits
    X = X / scale
    scores = []
    for seed in range(5):
        with warnings.catch_warnings():
            # Gaptron: pixels / 16 have ||x|| up to about 8 > x_norm_bound
            warnings.simplefilter("ignore", UserWarning)
            est = cls(random_state=seed).fit(X, y)
        scores.append(est.score(X, y))
    assert min(scores) > threshold, np.round(scores, 2)


def test_default_gaptron_learns_online_on_digits(digits):
    """One pass of ``Gaptron()`` over the digits in [0, 1] plays clearly better
    than uniform play (error 0.9): with the theory's step (the previous default,
    ``step_size="constant"``, recorded as ``learning_rate="auto"``) the online error
    was 0.89 to 0.91 for seeds 0-4; with the AdaGrad-norm step (``"adagrad"``) 0.71
    to 0.80 (docs/results/defaults/gaptron-step)."""
    X, y = digits
    X = X / 16.0
    uniform = 1 - 1 / 10
    errors = []
    for seed in range(5):
        est = Gaptron(random_state=seed).partial_fit(X, y, classes=np.arange(10))
        errors.append(est.n_mistakes_ / est.t_)
    assert max(errors) < uniform - 0.08, np.round(errors, 3)
