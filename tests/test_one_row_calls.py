"""A failed one-row call of a fitted learner (``partial_fit(row, [label])``
and ``partial_fit(row, LoggedFeedback(...))``) leaves the learner as before
the call, and one failing after its block keeps the block."""

from __future__ import annotations

import copy
import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _helpers import assert_same_learner, single_rows
from _registry import KERNEL_ENTRIES, entry_params

from skbandit import LoggedFeedback, OffPolicyWarning, SeparableOneVsAll

ALL = entry_params(KERNEL_ENTRIES)
K = 3
# caches a failed call may drop (the kernel's) or leave made (the validated
# parameters' slots: valid whatever the call did afterwards)
CACHES = ("_kernel_cache", "_validated_params")


def _stream(n=40, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / 4.0  # row norms below 1 (rational kernel)
    X[X < -0.1] = 0.0
    y = rng.integers(0, K, size=n)
    return X, y


def _one_call(est, row, label, logged):
    """One one-row call: the simulator's, or the live loop's (serve, then
    learn the round back); returns the action played (as a label)."""
    if not logged:
        t = est.t_
        fb_mistakes = est.n_mistakes_
        est.partial_fit(row, [label])
        assert est.t_ == t + 1
        return est.n_mistakes_ - fb_mistakes
    a, p = est.sample_actions(row)
    est.partial_fit(row, LoggedFeedback(a, [float(a[0] == label)], p))
    return a[0]


class _Fail(Exception):
    pass


def _failing(*args, **kwargs):
    raise _Fail


def _same_dict(est, before: dict) -> None:
    """Every entry of ``est.__dict__`` is the object it was in ``before``
    (the caches aside)."""
    now = {k: v for k, v in est.__dict__.items() if k not in CACHES}
    was = {k: v for k, v in before.items() if k not in CACHES}
    assert now.keys() == was.keys()
    for name, value in was.items():
        assert now[name] is value, name


@pytest.mark.filterwarnings("ignore::skbandit.OffPolicyWarning")
@pytest.mark.parametrize("where", ["hook", "commit", "row"])
@pytest.mark.parametrize("logged", [False, True], ids=["labels", "logged"])
@pytest.mark.parametrize("entry", ALL)
def test_a_failed_one_row_call_leaves_the_learner_as_before(
    entry, logged, where, monkeypatch
):
    """A one-row call that fails in its block (a hook after the rounds, or
    the commit of its counters) or before it (a bad row) leaves every entry
    of the instance dictionary the object it was (``n_iter_`` included:
    the call had set it to 0), as ``_transaction``'s copy of the dictionary
    did, and the learner then plays as one that never failed. Catches a
    one-row transaction that does not put ``n_iter_`` back, or a rollback
    point that misses an attribute."""
    if logged and not entry.bandit:
        pytest.skip("full-information learners do not learn from logged feedback")
    X, y = _stream(seed=1)
    rows = single_rows(X, "csr")
    est = entry.make(random_state=5).partial_fit(X[:8], y[:8], classes=np.arange(K))
    _one_call(est, rows[8], y[8], logged)  # the one-row caches exist
    twin = copy.deepcopy(est)
    row, label = rows[9], y[9]
    fb = None
    if logged:
        a, p = est.sample_actions(row)
        twin.sample_actions(row)
        fb = LoggedFeedback(a, [float(a[0] == label)], p)
    if where == "row":
        row = sp.csr_matrix(np.full((1, X.shape[1] + 1), 0.1))  # too wide
    elif where == "hook":
        est.__dict__["_after_block"] = _failing
    else:
        pass_class = "_acting._LoggedPass" if logged else "_training._LabelPass"
        monkeypatch.setattr(f"skbandit._base.{pass_class}.commit", _failing)
    before = dict(est.__dict__)
    with pytest.raises(_Fail if where != "row" else ValueError):
        est.partial_fit(row, fb if logged else [label])
    _same_dict(est, before)
    assert est.n_iter_ == 1
    est.__dict__.pop("_after_block", None)
    monkeypatch.undo()
    for i in range(10, 16):
        assert _one_call(est, rows[i], y[i], logged) == _one_call(
            twin, rows[i], y[i], logged
        )
    assert_same_learner(est, twin)


@pytest.mark.parametrize("entry", [e for e in ALL if e.id in ("SOBA", "PNewtron")])
def test_a_one_row_call_failing_after_its_block_keeps_it(entry):
    """A one-row call whose block finished and that fails afterwards (an
    ``OffPolicyWarning`` raised as an error, after the off-policy round was
    learned) keeps the block and reports ``n_iter_ = 0``, as
    ``_transaction`` does after a finished block. Catches a one-row
    transaction that takes the block for unfinished (``t_`` not compared)."""
    X, y = _stream(seed=2)
    rows = single_rows(X, "dense")
    est = entry.make(random_state=6).partial_fit(X[:8], y[:8], classes=np.arange(K))
    a, p = est.sample_actions(rows[8])
    t = est.t_
    off = LoggedFeedback(a, [1.0], [p[0] / 2])  # not the learner's own draw
    with warnings.catch_warnings():
        warnings.simplefilter("error", OffPolicyWarning)
        with pytest.raises(OffPolicyWarning):
            est.partial_fit(rows[8], off)
    assert est.t_ == t + 1 and est.n_iter_ == 0


def _peak_of_one_row_call(est, row, label) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        est.partial_fit(row, [label])
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("logged", [False, True], ids=["labels", "logged"])
def test_a_failed_one_row_call_after_serving_only_sets_no_n_iter(logged):
    """A learner that has only served rows (``sample_actions`` with the
    classes: fitted, no ``n_iter_`` yet) and whose first one-row learning call
    fails is left without ``n_iter_``, as before the call. Catches a one-row
    transaction that puts back a missing ``n_iter_`` as a value."""
    X, y = _stream(seed=9)
    rows = single_rows(X, "dense")
    est = SeparableOneVsAll(random_state=0)
    a, p = est.sample_actions(rows[0], classes=np.arange(K))
    est.sample_actions(rows[1])  # (a kernel cache and its OneRow exist)
    assert "n_iter_" not in est.__dict__
    before = dict(est.__dict__)
    est.__dict__["_after_block"] = _failing
    with pytest.raises(_Fail):
        if logged:
            est.partial_fit(rows[0], LoggedFeedback(a, [float(a[0] == y[0])], p))
        else:
            est.partial_fit(rows[0], [y[0]])
    del est.__dict__["_after_block"]
    _same_dict(est, before)
    assert "n_iter_" not in est.__dict__
