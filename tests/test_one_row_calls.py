"""The one-row calls of a fitted learner (``partial_fit(row, [label])`` and
``partial_fit(row, LoggedFeedback(...))``) allocate little and keep the
failure guarantee without copying the learner.

They record only ``t_`` and ``n_iter_`` besides their block's rollback point
(``TransactionMixin._one_row_failed``, instead of ``_transaction``'s copy of
the instance dictionary); the simulator's round plays through the compiled
``OneRow.learn_label`` (``_LabelPass._run_one``), every learner's; the ``OneRow``, its
rollback plan and the code table are made once and kept, as are the rational
``SeparableOneVsAll``'s cache tuple and its ``_sv_block`` entry. These tests
check that nothing kept from one call changes the next one's play (against a
learner whose caches are dropped before every call), that a failed one-row
call leaves the instance dictionary as it was (every entry the same object)
and that what a one-row call allocates does not grow with the number of
attributes of the learner.
"""

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


@pytest.mark.filterwarnings("ignore::skbandit.OffPolicyWarning")
@pytest.mark.parametrize("form", ["dense", "csr"])
@pytest.mark.parametrize("logged", [False, True], ids=["labels", "logged"])
@pytest.mark.parametrize("entry", ALL)
def test_kept_one_row_calls_play_as_dropped_ones(entry, logged, form):
    """One-row calls with what is kept from call to call (``OneRow``, its
    journal and plan, code table, the rational store's cache tuple) play as
    calls on a learner whose kernel cache is dropped before each (a new
    kernel, the general path with ``run_pass`` for labels, a new ``OneRow``
    for logged rounds): the same actions and the same learner after every
    call, and the cached model bytes those of the model. Catches a reused
    object that keeps a previous call's values (e.g. a simulator's round that
    does not advance the generator past its pair, or a stale model size)."""
    if logged and not entry.bandit:
        pytest.skip("full-information learners do not learn from logged feedback")
    X, y = _stream()
    rows = single_rows(X, form)
    kept = entry.make(random_state=4).partial_fit(X[:5], y[:5], classes=np.arange(K))
    dropped = copy.deepcopy(kept)
    for i in range(5, X.shape[0]):
        dropped.__dict__.pop("_kernel_cache", None)
        played = _one_call(kept, rows[i], y[i], logged)
        assert _one_call(dropped, rows[i], y[i], logged) == played, i
        assert_same_learner(kept, dropped)
        cache = kept.__dict__.get("_kernel_cache")
        if cache is not None and cache[0].unchanged(kept):
            assert cache[2] == kept._model_bytes(), i
    assert len(kept._kernel_cache) == 5  # the OneRow and its plan were kept


@pytest.mark.parametrize("form", ["dense", "csr"])
@pytest.mark.parametrize("entry", ALL)
def test_every_learner_plays_a_labelled_row_through_one_row(entry, form, monkeypatch):
    """A fitted learner's simulator call on one row takes the compiled
    one-row call (``OneRow.learn_label``), not ``run_pass`` (caught: a learner
    left on ``run_pass``, e.g. the full-information ones, whose call then
    makes its ten typed memory views, 5 KiB, every row)."""
    from skbandit._base import _training

    X, y = _stream()
    rows = single_rows(X, form)
    est = entry.make(random_state=4).partial_fit(X[:5], y[:5], classes=np.arange(K))

    def refused(*args, **kwargs):
        raise AssertionError("a one-row call went through run_pass")

    monkeypatch.setattr(_training, "run_pass", refused)
    for i in range(5, 12):
        est.partial_fit(rows[i], [y[i]])
    assert est.t_ == 12


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


@pytest.mark.parametrize("entry", ALL)
def test_one_row_calls_copy_no_attributes(entry):
    """What a one-row call allocates does not grow with the learner's
    attributes: 300 more entries in its instance dictionary add less than
    512 bytes to the traced peak of a call (a copy of the dictionary, as
    ``_transaction`` makes, adds about 10 KiB). Catches a one-row call that
    copies ``__dict__``."""
    X, y = _stream(seed=3)
    rows = single_rows(X, "csr")
    est = entry.make(random_state=7).partial_fit(X[:8], y[:8], classes=np.arange(K))
    for i in range(8, 12):  # (the caches of a one-row call exist)
        est.partial_fit(rows[i], [y[i]])
    plain = min(_peak_of_one_row_call(est, rows[i], y[i]) for i in range(12, 16))
    for j in range(300):
        est.__dict__[f"_extra_{j}"] = j
    for i in range(16, 20):  # (the dictionary settles after its growth)
        est.partial_fit(rows[i], [y[i]])
    crowded = min(_peak_of_one_row_call(est, rows[i], y[i]) for i in range(20, 24))
    assert crowded < plain + 512, (plain, crowded)


def test_rational_one_row_calls_keep_one_cache_tuple_and_no_new_entries():
    """The rational ``SeparableOneVsAll`` keeps its cache tuple while the
    model's bytes do not change (a round that adds no support vector) and
    makes a new one when they do; a one-row call neither adds nor deletes an
    entry of the instance dictionary (``_sv_block`` is set to None, not
    deleted), so the dictionary's table is not grown again every few calls.
    Catches a tuple made per round, or a stale model size kept."""
    X, y = _stream(n=80, seed=8)
    rows = single_rows(X, "csr")
    est = SeparableOneVsAll(kernel="rational", random_state=0)
    est.partial_fit(X[:10], y[:10], classes=np.arange(K))
    est.partial_fit(rows[10], [y[10]])
    keys = list(est.__dict__)
    same = grown = 0
    for i in range(11, 80):
        cache, n_sv = est._kernel_cache, est._kernel_cache[1].n_sv
        est.partial_fit(rows[i], [y[i]])
        assert list(est.__dict__) == keys
        assert est.__dict__["_sv_block"] is None
        now = est._kernel_cache
        assert now[2] == est._model_bytes()
        if now[1].n_sv == n_sv:
            assert now is cache
            same += 1
        else:
            grown += 1
    assert same and grown


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
