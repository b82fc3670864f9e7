"""Assertions shared by the protocol and validation tests."""

from __future__ import annotations

import numpy as np
from numpy.testing import assert_array_equal

STATE_ATTRS = ("t_", "n_mistakes_", "n_greedy_mistakes_", "n_features_in_")


def snapshot(est) -> dict:
    """Copies of the public fitted state of a learner."""
    return {
        "coef_": np.array(est.coef_, copy=True),
        "classes_": np.array(est.classes_, copy=True),
        **{a: getattr(est, a) for a in STATE_ATTRS},
    }


def assert_same_state(est, snap: dict) -> None:
    assert_array_equal(est.coef_, snap["coef_"])
    assert est.coef_.dtype == snap["coef_"].dtype
    assert_array_equal(est.classes_, snap["classes_"])
    for a in STATE_ATTRS:
        assert getattr(est, a) == snap[a], a


def assert_same_learner(a, b) -> None:
    """Two learners in the same public state (bitwise-equal weights)."""
    assert_same_state(a, snapshot(b))


def assert_same_log(fb_a, fb_b) -> None:
    for name in ("rows_", "actions_", "rewards_", "propensities_"):
        assert_array_equal(getattr(fb_a, name), getattr(fb_b, name), err_msg=name)
    assert fb_a.n_rounds_ == fb_b.n_rounds_
