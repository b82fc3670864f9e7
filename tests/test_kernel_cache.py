"""The kernel cached across calls (``BaseBanditClassifier._kernel``) is never
stale: after ``set_params``, pickling, a restore of the state in place, a call
that failed and a call refused by validation, the live loop plays and learns
exactly what a learner that builds a new kernel for every call does."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from _helpers import assert_same_learner
from _registry import KERNEL_ENTRIES as ENTRIES

import skbandit.base as base
from skbandit import Banditron, LoggedFeedback, OnlineSelector, SquareCB
from skbandit.exploration import EpsilonGreedy

K = 3
BANDIT = [e for e in ENTRIES if e.bandit]


def _rows(n=40, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / 4.0  # norms below 1 (the rational kernel)
    y = rng.integers(0, K, size=n)
    return [np.ascontiguousarray(X[i : i + 1]) for i in range(n)], y


def _live(est, rows, y, lo, hi):
    """Rounds lo..hi-1 of the live loop; the actions and propensities served."""
    out = []
    for i in range(lo, hi):
        a, p = est.sample_actions(rows[i], classes=np.arange(K) if i == 0 else None)
        est.partial_fit(rows[i], LoggedFeedback(a, [float(a[0] == y[i])], p))
        out.append((a[0], p[0]))
    return out


class _Uncached:
    """Make a learner (and its candidates) build a new kernel on every call."""

    def __init__(self, monkeypatch):
        real = base.BaseBanditClassifier._kernel

        def fresh(est):
            est.__dict__.pop("_kernel_cache", None)
            return real(est)

        monkeypatch.setattr(base.BaseBanditClassifier, "_kernel", fresh)


def _twins(make, rows, y, n):
    a, b = make(), make()
    _live(a, rows, y, 0, n)
    _live(b, rows, y, 0, n)
    return a, b


@pytest.mark.filterwarnings("ignore::skbandit.OffPolicyWarning")
@pytest.mark.parametrize(
    "make,change",
    [
        # the rule object's parameter changes in place (set_params nested)
        (
            lambda: Banditron(exploration=EpsilonGreedy(0.3), random_state=0),
            {"exploration__epsilon": 0.05},
        ),
        # a default rule made an object by the nested parameter
        (lambda: Banditron(random_state=0), {"exploration__epsilon": 0.6}),
        (lambda: Banditron(random_state=0), {"exploration": "softmax"}),
        (lambda: SquareCB(random_state=0), {"step_size__learning_rate": 2.0}),
        (lambda: SquareCB(random_state=0), {"exploration__scale": 3.0}),
        (lambda: OnlineSelector(random_state=0), {"exploration__epsilon": 0.9}),
    ],
    ids=[
        "Banditron-epsilon",
        "Banditron-default-epsilon",
        "Banditron-rule",
        "SquareCB-lr",
        "SquareCB-scale",
        "selector",
    ],
)
def test_set_params_between_calls_builds_a_new_kernel(make, change, monkeypatch):
    """A parameter replaced mid-stream is played from the next call on."""
    rows, y = _rows()
    est, ref = _twins(make, rows, y, 10)
    est.set_params(**change)
    ref.set_params(**change)
    played = _live(est, rows, y, 10, 40)
    with monkeypatch.context() as m:
        _Uncached(m)
        played_ref = _live(ref, rows, y, 10, 40)
    assert played == played_ref
    assert_same_learner(est, ref)
    # not vacuous: the change alters the play
    other, _ = _twins(make, rows, y, 10)
    assert _live(other, rows, y, 10, 40) != played


@pytest.mark.filterwarnings("ignore::skbandit.OffPolicyWarning")
def test_candidate_params_are_part_of_the_selectors_kernel(monkeypatch):
    """A selector's kernel holds its candidates' kernels: replacing a
    candidate's parameter makes a new one."""
    rows, y = _rows()
    make = lambda: OnlineSelector(  # noqa: E731
        [
            Banditron(exploration=EpsilonGreedy(0.5)),
            Banditron(exploration=EpsilonGreedy(0.2)),
        ],
        exploration=EpsilonGreedy(1.0),
        random_state=0,
    )
    est, ref = _twins(make, rows, y, 10)
    for learner in (est, ref):
        learner.candidates_[0].set_params(exploration__epsilon=0.01)
    played = _live(est, rows, y, 10, 40)
    with monkeypatch.context() as m:
        _Uncached(m)
        assert _live(ref, rows, y, 10, 40) == played
    assert_same_learner(est, ref)


@pytest.mark.filterwarnings("ignore::skbandit.OffPolicyWarning")
@pytest.mark.parametrize("entry", BANDIT, ids=lambda e: e.id)
def test_pickled_mid_stream_plays_on_as_the_original(entry):
    """The cache is not pickled (nor deep-copied); the copy builds its own
    kernel and plays on exactly as the original."""
    rows, y = _rows()
    est = entry.make(random_state=0)
    _live(est, rows, y, 0, 12)
    assert "_kernel_cache" in est.__dict__
    clone = pickle.loads(pickle.dumps(est))
    twin = copy.deepcopy(est)
    assert "_kernel_cache" not in clone.__dict__
    assert "_kernel_cache" not in twin.__dict__
    # the original keeps its own (pickling does not modify it)
    assert "_kernel_cache" in est.__dict__
    played = _live(est, rows, y, 12, 30)
    assert _live(clone, rows, y, 12, 30) == played
    assert _live(twin, rows, y, 12, 30) == played
    assert_same_learner(clone, est)


@pytest.mark.filterwarnings("ignore::skbandit.OffPolicyWarning")
@pytest.mark.parametrize("entry", BANDIT, ids=lambda e: e.id)
def test_state_restored_in_place_is_played_from(entry):
    """``_set_state`` writes the arrays in place: a kernel that keeps values
    derived from them (SquareCB's per-class exploration from ``n_updates_``)
    must not be reused, and replaying the same rounds gives the same play."""
    rows, y = _rows()
    est = entry.make(random_state=0)
    _live(est, rows, y, 0, 5)
    saved = est._get_state()
    first = _live(est, rows, y, 5, 30)
    est._set_state(saved)
    assert _live(est, rows, y, 5, 30) == first


@pytest.mark.filterwarnings("ignore::skbandit.OffPolicyWarning")
@pytest.mark.parametrize("entry", BANDIT, ids=lambda e: e.id)
def test_a_failed_call_then_a_good_one(entry, monkeypatch):
    """A call whose second row overflows (the bound on feature values lifted)
    fails after its first row updated the state in place; the journal undoes
    the arrays, and the next calls play as if the failed call never happened
    (a kernel holding values derived from the undone writes is dropped)."""
    monkeypatch.setattr("skbandit._base._rows._MAX_ABS_X", np.inf)
    rows, y = _rows()
    est = entry.make(random_state=0)
    _live(est, rows, y, 0, 10)
    ref = copy.deepcopy(est)
    bad = np.vstack([rows[10], *(r * 1e200 for r in rows[11:19])])
    a, p = est.sample_actions(rows[10])
    # learn the served row and overflowing ones in one call (one block)
    n = bad.shape[0]
    logged = LoggedFeedback(
        np.repeat(a, n), [float(a[0] == y[10])] + [1.0, 0.0] * 4, np.repeat(p, n)
    )
    with pytest.raises(FloatingPointError, match="non-finite"):
        est.partial_fit(bad, logged)
    est._n_pending = 0  # the served row was not learned: serve it again
    assert _live(est, rows, y, 10, 30) == _live(ref, rows, y, 10, 30)
    assert_same_learner(est, ref)


@pytest.mark.filterwarnings("ignore::skbandit.OffPolicyWarning")
@pytest.mark.parametrize("entry", BANDIT, ids=lambda e: e.id)
def test_refused_calls_then_good_ones(entry):
    """Calls refused by validation (other classes, a wrong width, an unknown
    logged action) change nothing, the cached kernel included."""
    rows, y = _rows()
    est = entry.make(random_state=0)
    _live(est, rows, y, 0, 10)
    ref = copy.deepcopy(est)
    with pytest.raises(ValueError, match="not the same"):
        est.sample_actions(rows[10], classes=np.arange(K + 1))
    with pytest.raises(ValueError, match="features"):
        est.sample_actions(np.zeros((1, 6)))
    with pytest.raises(ValueError, match="not in classes_"):
        est.partial_fit(rows[10], LoggedFeedback([K + 5], [1.0], [0.5]))
    assert _live(est, rows, y, 10, 30) == _live(ref, rows, y, 10, 30)
    assert_same_learner(est, ref)


@pytest.mark.filterwarnings("ignore::skbandit.OffPolicyWarning")
@pytest.mark.parametrize("make", [Banditron, SquareCB], ids=["Banditron", "SquareCB"])
def test_a_replaced_state_array_builds_a_new_kernel(make, monkeypatch):
    """A state attribute replaced by another array (the same values, or zeros)
    is the one the next call plays with and writes to."""
    rows, y = _rows()
    est, ref = _twins(lambda: make(random_state=0), rows, y, 10)
    for learner in (est, ref):
        learner.coef_ = np.zeros_like(learner.coef_)
    played = _live(est, rows, y, 10, 30)
    with monkeypatch.context() as m:
        _Uncached(m)
        assert _live(ref, rows, y, 10, 30) == played
    assert_same_learner(est, ref)
    assert np.any(est.coef_ != 0.0)


@pytest.mark.filterwarnings("ignore::skbandit.OffPolicyWarning")
@pytest.mark.parametrize("entry", BANDIT, ids=lambda e: e.id)
def test_fit_after_live_calls_starts_afresh(entry):
    """``fit`` after live rounds is the fit of a new learner, and so are the
    live rounds after it."""
    rows, y = _rows()
    X = np.vstack(rows)
    est = entry.make(random_state=0)
    _live(est, rows, y, 0, 10)
    est.fit(X[:20], y[:20])
    ref = entry.make(random_state=0).fit(X[:20], y[:20])
    assert_same_learner(est, ref)
    assert _live(est, rows, y, 20, 30) == _live(ref, rows, y, 20, 30)


@pytest.mark.filterwarnings("ignore::skbandit.OffPolicyWarning")
@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.id)
def test_one_row_calls_reuse_the_kernel(entry, monkeypatch):
    """The live loop (``sample_actions`` + logged ``partial_fit``) and the
    simulator's one-row ``partial_fit(row, [label])`` build the learner's
    kernel once, not on every call (a learner whose hooks write an attribute
    back as a new object would miss the cache on every call)."""
    rows, y = _rows(n=60)
    cls = entry.cls
    real = cls._make_kernel
    builds = []

    def counting(est):
        builds.append(type(est))
        return real(est)

    monkeypatch.setattr(cls, "_make_kernel", counting)
    loops = ["simulator"] + (["live"] if entry.bandit else [])
    half = len(rows) // 2
    for loop in loops:
        est = entry.make(random_state=0)
        for lo, hi in ((0, half), (half, len(rows))):
            # the first calls build it (a learner whose first block adds an
            # attribute, as the rational SeparableOneVsAll's store, rebuilds
            # once more); the later calls build none
            builds.clear()
            if loop == "live":
                _live(est, rows, y, lo, hi)
            else:
                for i in range(lo, hi):
                    est.partial_fit(
                        rows[i], [y[i]], classes=np.arange(K) if i == 0 else None
                    )
        assert est.t_ == len(rows)
        assert builds.count(cls) == 0, (loop, len(builds))
