"""One row form for every kernel, on every path.

* Sparse rows are canonical before any kernel reads them: a column stored twice
  in a CSR row counts as the sum of its values (as SciPy and the dense matrix
  read it), in any storage order; the caller's matrix is never modified.
* Feature values larger in magnitude than ``2**480`` are refused by the
  validation with the same ``ValueError`` from every learner and path, before
  anything changes.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import scipy.sparse as sp
from _helpers import _assert_equal_values as assert_same_state_value
from _helpers import assert_same_learner, assert_same_log, assert_same_state, snapshot
from _registry import entry_params
from numpy.testing import assert_allclose, assert_array_equal

import skbandit._base._rows
from skbandit import BanditFeedback, ConservativeOneVsAll, LoggedFeedback

ALL = entry_params()
K, D, N = 4, 7, 120


def _dyadic_stream(seed=0, n=N, d=D, k=K):
    """Dense rows of multiples of 1/16 in [-4, 4) (a third non-zero, some empty
    rows), so that every half ``v / 2`` is exact and two halves sum to ``v``
    exactly; labels from a random linear model."""
    rng = np.random.default_rng(seed)
    X = rng.integers(-64, 64, size=(n, d)) / 16.0
    X[rng.random((n, d)) < 2 / 3] = 0.0
    X[rng.choice(n, size=6, replace=False)] = 0.0
    y = np.argmax(X @ rng.standard_normal((d, k)), axis=1)
    return X, y


def _split_csr(X, shuffle_seed=None):
    """A CSR matrix equal to ``X`` with every non-zero ``v`` stored twice, as
    ``v / 2`` and ``v / 2``; the entries of each row in column order, or in a
    random order when ``shuffle_seed`` is given. Built from its arrays, so
    SciPy keeps the duplicates."""
    rng = np.random.default_rng(shuffle_seed)
    data, indices, indptr = [], [], [0]
    for row in X:
        cols = np.repeat(np.flatnonzero(row), 2)
        if shuffle_seed is not None:
            cols = cols[rng.permutation(cols.size)]
        indices.extend(cols)
        data.extend(row[cols] / 2)
        indptr.append(len(indices))
    Xs = sp.csr_matrix(
        (np.array(data), np.array(indices, dtype=np.int32),
         np.array(indptr, dtype=np.int32)),
        shape=X.shape,
    )  # fmt: skip
    assert not Xs.has_canonical_format
    assert_array_equal(Xs.toarray(), X)
    return Xs


def _arrays(Xs):
    return Xs.data.copy(), Xs.indices.copy(), Xs.indptr.copy()


def _assert_untouched(Xs, arrays):
    for a, b in zip((Xs.data, Xs.indices, Xs.indptr), arrays, strict=True):
        assert_array_equal(a, b)


def _assert_same(a, b, entry):
    """The same learner: bit for bit, except the full-covariance SOBA (its
    kd x kd updates are summed in another order for dense and sparse rows)."""
    if entry.id == "SOBA-full":
        sa, sb = snapshot(a), snapshot(b)
        assert sa.keys() == sb.keys()
        for name, value in sa.items():
            if isinstance(value, np.ndarray) and value.dtype.kind == "f":
                assert_allclose(value, sb[name], rtol=1e-8, atol=1e-12, err_msg=name)
            elif isinstance(value, float):
                assert_allclose(value, sb[name], rtol=1e-8, err_msg=name)
            else:
                assert_same_state_value(value, sb[name], name)
        return
    assert_same_learner(a, b)


def _assert_same_log(fa, fb, entry):
    if entry.id == "SOBA-full":
        assert_array_equal(fa.actions_, fb.actions_)
        assert_allclose(fa.propensities_, fb.propensities_, rtol=1e-8)
        return
    assert_same_log(fa, fb)


# ------------------------------------------------------------------ duplicates


def test_issue_example_one_row_stored_as_two_entries():
    """x = [2, 0, 0] stored as (0, 1.0), (0, 1.0): ||x||^2 = 4, so the PA step
    on class 0 (label -1, hinge loss 1) is tau = 1/4 and coef_[0, 0] = -0.5
    (not -1.0, the result of summing the squares of the stored entries)."""
    Xs = sp.csr_matrix(
        (np.array([1.0, 1.0]), np.array([0, 0], dtype=np.int32),
         np.array([0, 2], dtype=np.int32)),
        shape=(1, 3),
    )  # fmt: skip
    before = _arrays(Xs)
    est = ConservativeOneVsAll(random_state=0).partial_fit(Xs, [1], classes=[0, 1])
    assert est.coef_[0, 0] == -0.5
    dense = ConservativeOneVsAll(random_state=0)
    dense.partial_fit(np.array([[2.0, 0.0, 0.0]]), [1], classes=[0, 1])
    assert_array_equal(est.coef_, dense.coef_)
    _assert_untouched(Xs, before)
    assert not Xs.has_canonical_format


@pytest.mark.parametrize("entry", ALL)
def test_split_and_shuffled_csr_learn_as_the_dense_twin(entry):
    """fit and partial_fit on the split CSR matrix, on the same in shuffled
    order and on the dense matrix: the same actions, propensities and state."""
    X, y = _dyadic_stream(seed=5)
    split, shuffled = _split_csr(X), _split_csr(X, shuffle_seed=1)
    saved = [_arrays(split), _arrays(shuffled)]
    learners, logs = [], []
    for Xc in (X, split, shuffled):
        est = entry.make(random_state=3, max_iter=2)
        fb = BanditFeedback(y)
        est.fit(Xc, fb)
        fb_more = BanditFeedback(y[:50])
        est.partial_fit(Xc[:50], fb_more)
        learners.append(est)
        logs.append((fb, fb_more))
    for est, (fb, fb_more) in zip(learners[1:], logs[1:], strict=True):
        _assert_same(est, learners[0], entry)
        _assert_same_log(fb, logs[0][0], entry)
        _assert_same_log(fb_more, logs[0][1], entry)
    # the two CSR forms are the same canonical rows: bit for bit, every learner
    assert_same_learner(learners[1], learners[2])
    assert_same_log(logs[1][0], logs[2][0])
    for Xs, arrays in zip((split, shuffled), saved, strict=True):
        _assert_untouched(Xs, arrays)


@pytest.mark.filterwarnings("ignore::skbandit.OffPolicyWarning")
@pytest.mark.parametrize("entry", ALL)
def test_split_csr_on_every_prediction_and_acting_path(entry):
    """predict, decision_function, exploration_distribution, sample_actions
    (several rows and the single-row path) and logged learning (several rows
    and one row at a time) see the split rows as their dense twins."""
    X, y = _dyadic_stream(seed=7)
    fitted = entry.make(random_state=2).partial_fit(X[:60], y[:60], classes=range(K))
    Xs = _split_csr(X[60:], shuffle_seed=4)
    saved = _arrays(Xs)
    Xd = X[60:]
    # predict and decision_function use SciPy's sparse product for CSR rows
    # (another summation order than for dense rows): the split rows give
    # exactly what the canonical CSR twin gives, and the dense values up to
    # rounding
    canonical = sp.csr_matrix(Xd)
    assert_array_equal(fitted.predict(Xs), fitted.predict(canonical))
    assert_array_equal(
        fitted.decision_function(Xs), fitted.decision_function(canonical)
    )
    assert_allclose(
        fitted.decision_function(Xs),
        fitted.decision_function(Xd),
        rtol=1e-12,
        atol=1e-12,
    )
    proba = fitted.exploration_distribution(Xs)
    if entry.id == "SOBA-full":
        assert_allclose(proba, fitted.exploration_distribution(Xd), rtol=1e-8)
    else:
        assert_array_equal(proba, fitted.exploration_distribution(Xd))
    a, b = copy.deepcopy(fitted), copy.deepcopy(fitted)
    acts_s, props_s = a.sample_actions(Xs)
    acts_d, props_d = b.sample_actions(Xd)
    for i in range(3):  # the single-row path
        acts_s = np.append(acts_s, a.sample_actions(Xs[i])[0])
        acts_d = np.append(acts_d, b.sample_actions(Xd[i : i + 1])[0])
    assert_array_equal(acts_s, acts_d)
    assert_allclose(props_s, props_d, rtol=1e-8 if entry.id == "SOBA-full" else 0)
    if entry.bandit:
        # learning logged rounds: a block of rows, then one row at a time
        rewards = (acts_d[: len(Xd)] == y[60:]).astype(float)
        logged = LoggedFeedback(acts_d[: len(Xd)], rewards, props_d)
        a, b = copy.deepcopy(fitted), copy.deepcopy(fitted)
        a.partial_fit(Xs[:40], logged[:40])
        b.partial_fit(Xd[:40], logged[:40])
        for i in range(40, 45):
            a.partial_fit(Xs[i], logged[i : i + 1])
            b.partial_fit(Xd[i : i + 1], logged[i : i + 1])
        _assert_same(a, b, entry)
    _assert_untouched(Xs, saved)


@pytest.mark.parametrize("large_norm", ["raise", "project"])
def test_rational_kernel_sees_the_norm_of_the_row_as_a_vector(large_norm):
    """SeparableOneVsAll(kernel="rational") needs rows of norm at most 1: the row
    [1.2, 0, 0] stored as (0, 0.6), (0, 0.6) has norm 1.2 (the squares of the
    stored entries sum to 0.72 only). It is refused (``large_norm="raise"``) or
    projected to [1, 0, 0] (``"project"``), as the dense row: the same support
    set and the same scores."""
    from skbandit import SeparableOneVsAll

    dense = np.array(
        [[1.2, 0.0, 0.0], [0.0, 0.5, 0.0], [0.0, 0.0, -0.75], [0.0, 0.5, 0.5]]
    )
    split, y = _split_csr(dense), [1, 0, 0, 0]  # row 0 enters the support set
    learners = []
    for X in (dense, split):
        est = SeparableOneVsAll(
            kernel="rational", large_norm=large_norm, random_state=0
        )
        if large_norm == "raise":
            with pytest.raises(ValueError, match="norm 1.2"):
                est.partial_fit(X, y, classes=[0, 1])
            continue
        learners.append(est.partial_fit(X, y, classes=[0, 1]))
    if learners:
        assert_same_learner(learners[1], learners[0])
        assert_array_equal(
            learners[1].decision_function(split), learners[0].decision_function(dense)
        )
        # and on the dense rows
        assert_array_equal(
            learners[1].decision_function(dense), learners[0].decision_function(dense)
        )


def test_canonical_input_is_not_copied_and_stale_flags_are_not_trusted():
    """A canonical CSR matrix reaches the kernels without a copy; a matrix whose
    cached canonical flag is stale (indices edited in place) is still summed."""
    X, _ = _dyadic_stream(seed=2, n=10)
    Xc = sp.csr_matrix(X)
    assert Xc.has_canonical_format
    est = ConservativeOneVsAll()
    assert est._validate_X(Xc, reset=True) is Xc
    # row 0 as (j, v/2) twice: edit a canonical matrix's arrays in place, so
    # SciPy's cached flag still says canonical
    split = _split_csr(X)
    stale = sp.csr_matrix(X)
    assert stale.has_canonical_format
    stale.data, stale.indices, stale.indptr = split.data, split.indices, split.indptr
    assert stale.has_canonical_format  # stale
    seen = est._validate_X(stale, reset=True)
    assert_array_equal(seen.indptr, Xc.indptr)
    assert_array_equal(seen.indices, Xc.indices)
    assert_array_equal(seen.data, Xc.data)
    assert_array_equal(stale.indices, split.indices)  # the caller's arrays


def _strided(a):
    """A strided (not C-contiguous) view with the values of ``a``."""
    wide = np.zeros(2 * a.shape[0], dtype=a.dtype)
    wide[::2] = a
    return wide[::2]


@pytest.mark.filterwarnings("ignore::skbandit.OffPolicyWarning")
@pytest.mark.parametrize("name", ["data", "indices", "indptr"])
@pytest.mark.parametrize("entry", ALL)
def test_csr_with_strided_arrays_plays_as_its_contiguous_twin(entry, name):
    """A CSR matrix whose ``data``, ``indices`` or ``indptr`` is a strided view
    (SciPy and scikit-learn's validation keep it) is validated into contiguous
    arrays (the kernels read nothing else): fit, partial_fit on a new and on a
    fitted learner, predict, decision_function, exploration_distribution and
    sample_actions as on the contiguous matrix; the caller's arrays untouched."""
    X, y = _dyadic_stream(seed=3, n=40)
    # a Python-loop learner (rounds tens of times a kernel's) fits two passes,
    # as the split-CSR test above does for every learner: each round reads the
    # validated rows, so the second pass replays them from a learnt state and
    # the three more of the default only repeat that
    passes = {"max_iter": 2} if entry.python_loop else {}
    Xc = sp.csr_matrix(X)
    arrays = {n: getattr(Xc, n) for n in ("data", "indices", "indptr")}
    arrays[name] = _strided(arrays[name])
    Xs = sp.csr_matrix(
        (arrays["data"], arrays["indices"], arrays["indptr"]), shape=Xc.shape
    )
    assert not getattr(Xs, name).flags.c_contiguous
    saved = _arrays(Xs)
    learners = []
    for Xf in (Xc, Xs):
        est = entry.make(random_state=1, **passes).fit(Xf, y)
        est.partial_fit(Xf[:20], y[:20], classes=range(K))  # a fitted learner
        est.partial_fit(Xf, y)
        new = entry.make(random_state=1, **passes).partial_fit(Xf, y, classes=range(K))
        out = [
            est.predict(Xf),
            est.decision_function(Xf),
            est.exploration_distribution(Xf),
        ]
        if entry.bandit:
            out.extend(copy.deepcopy(est).sample_actions(Xf))
        learners.append((est, new, out))
    (a, new_a, out_a), (b, new_b, out_b) = learners
    _assert_same(b, a, entry)
    _assert_same(new_b, new_a, entry)
    for u, v in zip(out_a, out_b, strict=True):
        assert_array_equal(u, v)
    _assert_untouched(Xs, saved)
    assert not getattr(Xs, name).flags.c_contiguous


# ------------------------------------------------------------------ magnitude

BOUND = 2.0**480
_MESSAGE = r"^{name}: X\[{row}, {col}\] = {value} is larger in magnitude than the bound on feature values, 2\*\*480 \(about 3.12e\+144\).*MaxAbsScaler"  # noqa: E501


def _message(entry, row, col, value="-?[0-9.e+]+"):
    return _MESSAGE.format(name=entry.name, row=row, col=col, value=value)


@pytest.mark.parametrize("entry", ALL)
@pytest.mark.parametrize("container", ["dense", "csr"])
def test_huge_values_are_refused_on_every_path(entry, container):
    """One rule for every learner and both paths: |x_ij| > 2**480 is a
    ValueError naming the entry, raised before anything changes."""
    X, y = _dyadic_stream(seed=9)
    wrap = sp.csr_matrix if container == "csr" else np.asarray
    huge = X[:20].copy()
    huge[13, 2] = -1e300
    # a first call: the learner stays unfitted
    fresh = entry.make(random_state=0)
    with pytest.raises(ValueError, match=_message(entry, 13, 2, "-1e\\+300")):
        fresh.partial_fit(wrap(huge), y[:20], classes=range(K))
    assert not hasattr(fresh, "classes_")
    with pytest.raises(ValueError, match=_message(entry, 13, 2)):
        fresh.fit(wrap(huge), y[:20])
    # a fitted learner: every path refuses it and changes nothing
    est = entry.make(random_state=0).partial_fit(X[20:], y[20:], classes=range(K))
    snap = snapshot(est)
    row = np.zeros((1, D))
    row[0, 5] = np.nextafter(BOUND, np.inf)
    calls = [
        lambda: est.partial_fit(wrap(huge), y[:20]),
        lambda: est.partial_fit(wrap(row), y[:1]),
        lambda: est.sample_actions(wrap(row)),
        lambda: est.predict(wrap(row)),
        lambda: est.decision_function(wrap(huge)),
        lambda: est.exploration_distribution(wrap(row)),
    ]
    if entry.bandit:  # logged feedback, one row: the fast single-row path
        logged = LoggedFeedback([0], [1.0], [0.5])
        calls.append(lambda: est.partial_fit(wrap(row), logged))
    for call in calls:
        with pytest.raises(ValueError, match=f"^{entry.name}: X\\[[0-9]+, [0-9]+\\]"):
            call()
        assert_same_state(est, snap)
    assert est.n_pending_ == 0
    # the bound itself is accepted
    row[0, 5] = BOUND
    est.predict(wrap(row))


def test_the_bound_keeps_a_rows_squared_norm_finite():
    """The documented reason for 2**480: with fewer than 2**31 columns (the
    kernels' index limit) a row at the bound has ||x||^2 < 2**991, a factor
    2**32 below the largest float64."""
    assert skbandit._base._rows._MAX_ABS_X == BOUND
    assert BOUND**2 * 2.0**31 == 2.0**991
    assert 2.0**991 * 2.0**32 < np.finfo(np.float64).max
