"""The step-size rules (``skbandit.optim``) as learner parameters: what they
print, which learner plays which rule, and the ``step_size__`` parameters."""

from __future__ import annotations

import numpy as np
import pytest
from _data import make_stream
from numpy.testing import assert_array_equal
from sklearn.base import clone

from skbandit import Gaptron, SquareCB
from skbandit.optim import AdaGrad, Constant, Normalized


def _fitted(est, n=80, k=3, seed=0):
    X, y = make_stream(n=n, d=5, k=k, seed=seed)
    return est.partial_fit(X, y, classes=np.arange(k)), X, y


def test_rules_print_every_value_they_play():
    """The printed form names the rule and every value that differs from the
    rule's own fixed defaults (no value that depends on the learner)."""
    assert repr(AdaGrad(1024.0, per_coordinate=False)) == (
        "AdaGrad(learning_rate=1024.0, per_coordinate=False)"
    )
    assert repr(Constant(0.1)) == "Constant(learning_rate=0.1)"
    assert Normalized().get_params() == {"learning_rate": 0.5}
    assert AdaGrad().get_params() == {"learning_rate": 0.5, "per_coordinate": True}


@pytest.mark.parametrize(
    ("est", "match"),
    [
        (Gaptron(step_size=Normalized()), "Gaptron does not accept Normalized"),
        (Gaptron(step_size=AdaGrad(1.0)), "per_coordinate=False"),
        (SquareCB(step_size=AdaGrad(per_coordinate=False)), "per_coordinate=True"),
        (SquareCB(step_size=Constant(-1.0)), "learning_rate"),
        (SquareCB(step_size="sgd"), "step_size"),
    ],
)
def test_a_rule_the_update_cannot_play_is_refused_and_leaves_the_learner(est, match):
    """A refused rule raises a ValueError naming the problem, on a new learner
    and on a fitted one, whose state it leaves as it was."""
    X, y = make_stream(n=30, d=5, k=3, seed=1)
    with pytest.raises(ValueError, match=match):
        clone(est).fit(X, y)
    fitted, X, y = _fitted(type(est)(random_state=0))
    before = {name: np.copy(getattr(fitted, name)) for name in fitted._state_attrs}
    t = fitted.t_
    fitted.set_params(step_size=est.step_size)
    with pytest.raises(ValueError, match=match):
        fitted.partial_fit(X, y)
    for name in fitted._state_attrs:
        assert_array_equal(getattr(fitted, name), before[name], err_msg=name)
    assert fitted.t_ == t


def test_a_name_plays_the_learners_values_of_that_rule():
    """SquareCB's names play their rule at rate 0.5; the resolved rule is
    ``step_size_`` and plays as the same object passed explicitly."""
    for name, rule in [
        ("normalized", Normalized(0.5)),
        ("adagrad", AdaGrad(0.5)),
        ("constant", Constant(0.5)),
    ]:
        by_name, X, y = _fitted(SquareCB(step_size=name, random_state=3))
        by_rule, _, _ = _fitted(SquareCB(step_size=rule, random_state=3))
        assert type(by_name.step_size_) is type(rule)
        assert by_name.step_size_.get_params() == rule.get_params()
        assert_array_equal(by_name.coef_, by_rule.coef_)
        assert_array_equal(by_name.intercept_, by_rule.intercept_)


def test_nested_rate_on_a_name_set_in_the_same_call():
    """``set_params(step_size="adagrad", step_size__learning_rate=0.2)`` is
    ``AdaGrad(0.2)`` (the name made that rule's object first), and it plays
    as that object; the rules differ, so do the weights."""
    nested = SquareCB(random_state=0).set_params(
        step_size="adagrad", step_size__learning_rate=0.2
    )
    assert type(nested.step_size) is AdaGrad
    assert nested.step_size.get_params() == {
        "learning_rate": 0.2,
        "per_coordinate": True,
    }
    a, _, _ = _fitted(nested)
    b, _, _ = _fitted(SquareCB(step_size=AdaGrad(0.2), random_state=0))
    c, _, _ = _fitted(SquareCB(step_size=AdaGrad(0.5), random_state=0))
    assert_array_equal(a.coef_, b.coef_)
    assert not np.array_equal(a.coef_, c.coef_)


def test_a_clone_tunes_its_own_rule():
    """``clone`` copies the rule object: tuning the clone's rate in place (as a
    grid search does) leaves the original learner's rule alone."""
    est = SquareCB(step_size=Normalized(0.5))
    twin = clone(est).set_params(step_size__learning_rate=0.1)
    assert est.step_size.learning_rate == 0.5
    assert twin.step_size.learning_rate == 0.1


def test_a_rate_changed_in_place_is_played_by_a_fitted_learner():
    """A fitted learner's rule tuned in place by ``set_params`` plays its new
    rate on the next call (the kernel is not kept with the old one)."""
    X, y = make_stream(n=120, d=5, k=3, seed=4)
    tuned = SquareCB(step_size=Constant(0.5), random_state=0)
    tuned.partial_fit(X[:60], y[:60], classes=np.arange(3))
    tuned.set_params(step_size__learning_rate=0.01).partial_fit(X[60:], y[60:])
    fresh = SquareCB(step_size=Constant(0.5), random_state=0)
    fresh.partial_fit(X[:60], y[:60], classes=np.arange(3))
    fresh.set_params(step_size=Constant(0.01)).partial_fit(X[60:], y[60:])
    assert tuned.step_size_.learning_rate == 0.01
    assert_array_equal(tuned.coef_, fresh.coef_)
