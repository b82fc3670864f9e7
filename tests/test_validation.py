"""Bad inputs: a ValueError/TypeError whose message names the problem, and the learner's
state unchanged afterwards -- including its random generator, checked by continuing the
stream and comparing with a twin that never saw the bad call. A failed first call
leaves the learner unfitted."""

from __future__ import annotations

import copy
import re

import numpy as np
import pytest
import scipy.sparse as sp
from _data import make_stream
from _helpers import assert_same_learner, assert_same_log, assert_same_state, snapshot
from _registry import ENTRIES, FULL_PRODUCT, entry_params
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import InvalidParameterError

from skbandit import BanditFeedback, LoggedFeedback

ALL = entry_params()
K, D, SEED = 4, 6, 77
CLASSES = np.arange(K)


def _stream():
    # empty rows make scores tie at any W, so even the Perceptron's generator
    # state shows in the continuation
    return make_stream(n=260, d=D, k=K, n_empty=30, seed=SEED)


# A Python-loop meta-estimator (``Entry.python_loop``: a regressor per class
# called from Python, rounds tens of times a kernel's) continues on the first
# rows only, after a failed call or from a fresh start: its state is compared
# whole (regressors, buffer, counters, generator) before and after the
# continuation, and its generator draws two uniforms every round, so a
# difference shows on the first rounds; the kernels keep the 160 or 260 rows.
PYTHON_LOOP_CONTINUATION = 60


def _continuation(entry, X, y):
    """``X, y``, or their first rows for a Python-loop learner."""
    if entry.python_loop:
        return X[:PYTHON_LOOP_CONTINUATION], y[:PYTHON_LOOP_CONTINUATION]
    return X, y


def _fitted(entry):
    X, y = _stream()
    est = entry.make(random_state=SEED)
    est.partial_fit(X[:100], y[:100], classes=CLASSES)
    return est, *_continuation(entry, X[100:], y[100:])


def _with(X, i, j, value):
    X = X.copy()
    X[i, j] = value
    return X


# (id, classes, match): classes no path may accept (with K = 4 classes 0..3)
BAD_CLASSES = [
    ("2d", CLASSES.reshape(2, 2), "classes must be a 1-D"),
    ("ragged", [[0, 1], [2, 3, 4]], "classes must be a 1-D"),
    ("nan", [0.0, 1.0, 2.0, 3.0, np.nan], r"finite .* got \[nan\]"),
    ("inf", [0.0, 1.0, 2.0, 3.0, np.inf], r"finite .* got \[inf\]"),
    ("complex", CLASSES + 0j, "classes must be real"),
    ("none", np.array([0, 1, 2, 3, None], dtype=object), r"got \[None\]"),
]


def _logged(y):
    return LoggedFeedback(y, np.ones(len(y)), np.full(len(y), 1 / K))


# the calls that take ``classes``: f(X, y, classes) -> f(est)
_CLASSES_CALLS = {
    "partial_fit": lambda X, y, c: lambda e: e.partial_fit(X, y, classes=c),
    "sample_actions": lambda X, y, c: lambda e: e.sample_actions(X, classes=c),
    "logged": lambda X, y, c: lambda e: e.partial_fit(X, _logged(y), classes=c),
}


# (id, bad call on a fitted learner: f(est, X, y), exception, match)
def _later_calls(name):
    def pf(X, y, **kw):
        return lambda est: est.partial_fit(X, y, **kw)

    X, y = _stream()
    X, y = X[:20], y[:20]
    y_out = y.copy()
    y_out[5] = 99
    return [
        (
            "n-features",
            pf(X[:, :3], y),
            ValueError,
            f"X has 3 features, but {name} is expecting {D} features as input",
        ),
        (
            "n-features-csr",
            pf(sp.csr_matrix(np.hstack([X, X])), y),
            ValueError,
            f"X has {2 * D} features, but {name} is expecting {D} features",
        ),
        ("label-not-in-classes", pf(X, y_out), ValueError, "not in classes"),
        (
            "label-not-in-classes-feedback",
            pf(X, BanditFeedback(y_out)),
            ValueError,
            "not in classes",
        ),
        (
            "string-label",
            pf(X, np.array(["a"] * 20)),
            (ValueError, TypeError),
            "not in classes",
        ),
        ("classes-more", pf(X, y, classes=np.arange(K + 1)), ValueError, "classes"),
        ("classes-fewer", pf(X, y % 3, classes=np.arange(3)), ValueError, "classes"),
        ("classes-other", pf(X, y, classes=CLASSES + 1), ValueError, "classes"),
        ("empty", pf(X[:0], y[:0]), ValueError, re.escape("0 sample(s)")),
        (
            "length-mismatch",
            pf(X, y[:19]),
            ValueError,
            "inconsistent numbers of samples",
        ),
        (
            "length-mismatch-feedback",
            pf(X[:18], BanditFeedback(y)),
            ValueError,
            "inconsistent numbers of samples",
        ),
        ("3d", pf(X.reshape(20, 2, 3), y), ValueError, "Expected 2D array|dim 3"),
        # classes that cannot be a learner's classes, passed again: refused even
        # when flattening or dropping the bad values would give classes_
        *[
            (f"classes-{bad}-{call}", make(X, y, classes), ValueError, match)
            for bad, classes, match in BAD_CLASSES
            for call, make in _CLASSES_CALLS.items()
        ],
    ]


LATER_IDS = [c[0] for c in _later_calls("E")]


def _classes_case(entry_index: int, case: str) -> bool:
    """Whether the entry at ``entry_index`` of ``ENTRIES`` runs ``case``: every
    case that is not a bad ``classes`` case; of those (``classes-{bad}-{call}``,
    checked by code every learner shares), the full product on ``FULL_PRODUCT``
    and one bad value per call on the others, in turn, so that every
    (bad value, call) pair still runs on several learners."""
    if not case.startswith("classes-") or ENTRIES[entry_index].id == FULL_PRODUCT:
        return True
    bad_ids = [bad for bad, _, _ in BAD_CLASSES]
    calls = list(_CLASSES_CALLS)
    for j, call in enumerate(calls):
        bad = bad_ids[(entry_index + j) % len(bad_ids)]
        if case == f"classes-{bad}-{call}":
            return True
    return not any(case == f"classes-{b}-{c}" for b in bad_ids for c in calls)


def _entry_cases(case_ids: list[str]) -> list:
    return [
        pytest.param(e, case, id=f"{e.id}-{case}")
        for i, e in enumerate(ENTRIES)
        for case in case_ids
        if _classes_case(i, case)
    ]


def _continue_and_compare(est, twin, X_cont, y_cont):
    fb_a, fb_b = BanditFeedback(y_cont), BanditFeedback(y_cont)
    est.partial_fit(X_cont, fb_a)
    twin.partial_fit(X_cont, fb_b)
    assert_same_learner(est, twin)
    assert_same_log(fb_a, fb_b)


@pytest.mark.parametrize("entry, case", _entry_cases(LATER_IDS))
def test_bad_partial_fit_later_call(entry, case):
    est, X_cont, y_cont = _fitted(entry)
    _, call, exc, match = next(c for c in _later_calls(entry.name) if c[0] == case)
    snap = snapshot(est)
    twin = copy.deepcopy(est)
    with pytest.raises(exc, match=match):
        call(est)
    assert_same_state(est, snap)
    _continue_and_compare(est, twin, X_cont, y_cont)


@pytest.mark.parametrize("entry", ALL)
def test_failed_call_writes_no_feedback_log(entry):
    est, X, y = _fitted(entry)
    y_out = y[:20].copy()
    y_out[-1] = 99
    fb = BanditFeedback(y_out)
    with pytest.raises(ValueError, match="not in classes"):
        est.partial_fit(X[:20], fb)
    assert fb.n_rounds_ == 0
    assert len(fb.rows_) == len(fb.actions_) == len(fb.rewards_) == 0
    fb_nan = BanditFeedback(y[:20])
    with pytest.raises(ValueError, match="NaN"):
        est.partial_fit(_with(X[:20], 19, 0, np.nan), fb_nan)
    assert fb_nan.n_rounds_ == 0


@pytest.mark.parametrize("entry", ALL)
@pytest.mark.parametrize(
    "case",
    ["single-class", "empty", "length-mismatch", "3d"],
)
def test_bad_fit_on_fitted_learner_leaves_it_unchanged(entry, case):
    est, X_cont, y_cont = _fitted(entry)
    X, y = _stream()
    X, y = X[:30], y[:30]
    bad = {
        "single-class": (X, np.full(30, 2), "class"),
        "empty": (X[:0], y[:0], re.escape("0 sample(s)")),
        "length-mismatch": (X, y[:-1], "inconsistent numbers of samples"),
        "3d": (X.reshape(30, 3, 2), y, "Expected 2D array|dim 3"),
    }[case]
    snap = snapshot(est)
    twin = copy.deepcopy(est)
    with pytest.raises(ValueError, match=bad[2]):
        est.fit(bad[0], bad[1])
    assert_same_state(est, snap)
    _continue_and_compare(est, twin, X_cont, y_cont)


# --------------------------------------------------------------------------------------
# a failed first call leaves the learner unfitted


def _first_calls():
    X, y = _stream()
    X, y = X[:40], y[:40]
    y_out = y.copy()
    y_out[7] = 9
    return {
        "classes-missing": (lambda e: e.partial_fit(X, y), ValueError, "classes"),
        "classes-missing-feedback": (
            lambda e: e.partial_fit(X, BanditFeedback(y)), ValueError, "classes"),
        "single-class": (
            lambda e: e.partial_fit(X, np.zeros(40, int), classes=[0]),
            ValueError, "class"),
        "single-class-repeated": (
            lambda e: e.partial_fit(X, np.ones(40, int), classes=[1, 1]),
            ValueError, "class"),
        "fit-single-class": (lambda e: e.fit(X, np.full(40, 3)), ValueError, "class"),
        "label-not-in-classes": (
            lambda e: e.partial_fit(X, y_out, classes=CLASSES),
            ValueError, "not in classes"),
        "empty": (lambda e: e.partial_fit(X[:0], y[:0], classes=CLASSES),
                  ValueError, re.escape("0 sample(s)")),
        "fit-empty": (lambda e: e.fit(X[:0], y[:0]),
                      ValueError, re.escape("0 sample(s)")),
        "length-mismatch": (lambda e: e.partial_fit(X, y[:39], classes=CLASSES),
                            ValueError, "inconsistent numbers of samples"),
        "fit-length-mismatch": (lambda e: e.fit(X[:39], y),
                                ValueError, "inconsistent numbers of samples"),
        "3d": (lambda e: e.partial_fit(X.reshape(40, 2, 3), y, classes=CLASSES),
               ValueError, "Expected 2D array|dim 3"),
        **{
            f"classes-{bad}-{call}": (make(X, y, classes), ValueError, match)
            for bad, classes, match in BAD_CLASSES
            for call, make in _CLASSES_CALLS.items()
        },
    }  # fmt: skip


@pytest.mark.parametrize("entry, case", _entry_cases(list(_first_calls())))
def test_failed_first_call_leaves_learner_unfitted(entry, case):
    call, exc, match = _first_calls()[case]
    est = entry.make(random_state=SEED)
    with pytest.raises(exc, match=match):
        call(est)
    _assert_unfitted_like_fresh(entry, est)


def _assert_unfitted_like_fresh(entry, est):
    """``est`` is unfitted, and its next good call acts like a fresh learner's."""
    X, y = _continuation(entry, *_stream())
    with pytest.raises(NotFittedError):
        est.predict(X)
    with pytest.raises(NotFittedError):
        est.decision_function(X)
    fb_a, fb_b = BanditFeedback(y), BanditFeedback(y)
    est.partial_fit(X, fb_a, classes=CLASSES)
    fresh = entry.make(random_state=SEED).partial_fit(X, fb_b, classes=CLASSES)
    assert_same_learner(est, fresh)
    assert_same_log(fb_a, fb_b)


@pytest.mark.parametrize("entry", ALL)
def test_unfitted_learner_raises_not_fitted(entry):
    X, y = _stream()
    est = entry.make(random_state=SEED)
    methods = ["predict", "decision_function"]
    if hasattr(est, "exploration_distribution"):
        methods.append("exploration_distribution")
    for method in methods:
        with pytest.raises(NotFittedError):
            getattr(est, method)(X)
    with pytest.raises(NotFittedError):
        est.score(X, y)


@pytest.mark.parametrize("entry", ALL)
def test_bad_prediction_inputs(entry):
    est, X, _ = _fitted(entry)
    snap = snapshot(est)
    methods = ["predict", "decision_function"]
    if hasattr(est, "exploration_distribution"):
        methods.append("exploration_distribution")
    for method in methods:
        f = getattr(est, method)
        with pytest.raises(
            ValueError,
            match=f"X has 2 features, but {entry.name} is expecting {D} features",
        ):
            f(X[:5, :2])
        with pytest.raises(ValueError, match="Expected 2D array|dim 3"):
            f(X[:6].reshape(6, 2, 3))
    assert_same_state(est, snap)


# --------------------------------------------------------------------------------------
# NaN, +inf and -inf in X, dense and CSR, on every entry point

NONFINITE = [
    pytest.param(np.nan, "NaN", id="nan"),
    pytest.param(np.inf, "(?i)inf", id="+inf"),
    pytest.param(-np.inf, "(?i)inf", id="-inf"),
]
# entry points on a fresh learner (it must stay unfitted) and on a fitted one (it
# must stay unchanged)
FRESH_POINTS = ["fit", "partial_fit-first"]
FITTED_POINTS = [
    "fit-again",
    "partial_fit-later",
    "predict",
    "decision_function",
    "score",
    "exploration_distribution",
]


def _nonfinite_X(X, value, container, where):
    """X with ``value`` at its first or last entry (stored explicitly in CSR: the
    first or last element of ``data``, after rows that are all finite)."""
    i, j = (0, 0) if where == "first" else (X.shape[0] - 1, X.shape[1] - 1)
    X = _with(X, i, j, value)
    if container == "csr":
        X = sp.csr_matrix(X)
        pos = 0 if where == "first" else X.nnz - 1
        assert not np.isfinite(X.data[pos])
        assert np.isfinite(np.delete(X.data, pos)).all()
    return X


def _call(est, point, X, feedback, y):
    if point in ("fit", "fit-again"):
        return est.fit(X, feedback)
    if point == "partial_fit-first":
        return est.partial_fit(X, feedback, classes=CLASSES)
    if point == "partial_fit-later":
        return est.partial_fit(X, feedback)
    if point == "score":
        return est.score(X, y)
    return getattr(est, point)(X)


# (value, match, container, where): every non-finite value, in a dense or a
# CSR X, at its first or last entry
NONFINITE_CASES = [
    pytest.param(value, match, container, where, id=f"{p.id}-{container}-{where}")
    for p in NONFINITE
    for value, match in [p.values]
    for container in ("dense", "csr")
    for where in ("first", "last")
]
# the learner on which every entry point meets every case; the others meet one
# case per entry point, in turn, so that each case still reaches each entry point
# through several learners (the checks are shared code; what differs between
# learners is whether their own path reaches them before changing state)


def _nonfinite_cases():
    points = [
        (e, point)
        for e in ENTRIES
        for point in FRESH_POINTS + FITTED_POINTS
        if hasattr(e.cls, point.split("-")[0])
    ]
    cases = []
    for i, (e, point) in enumerate(points):
        chosen = (
            NONFINITE_CASES
            if e.id == FULL_PRODUCT
            else [NONFINITE_CASES[i % len(NONFINITE_CASES)]]
        )
        cases += [
            pytest.param(e, point, *c.values, id=f"{e.id}-{point}-{c.id}")
            for c in chosen
        ]
    return cases


@pytest.mark.parametrize("entry, point, value, match, container, where",
                         _nonfinite_cases())  # fmt: skip
def test_nonfinite_X_is_rejected(entry, point, value, match, container, where):
    """A ValueError naming NaN or infinity; nothing logged; a fresh learner stays
    unfitted and a fitted one unchanged (weights, counters and generator)."""
    X, y = _stream()
    fresh = point in FRESH_POINTS
    if fresh:
        est = entry.make(random_state=SEED)
    else:
        est, X_cont, y_cont = _fitted(entry)
        snap = snapshot(est)
        twin = copy.deepcopy(est)
    X_bad = _nonfinite_X(X[100:140], value, container, where)
    feedback = BanditFeedback(y[100:140])
    with pytest.raises(ValueError, match=match):
        _call(est, point, X_bad, feedback, y[100:140])
    assert feedback.n_rounds_ == 0
    assert len(feedback.actions_) == len(feedback.propensities_) == 0
    if fresh:
        _assert_unfitted_like_fresh(entry, est)
    else:
        assert_same_state(est, snap)
        _continue_and_compare(est, twin, X_cont, y_cont)


@pytest.mark.parametrize("case", ["dense-nan", "csr-inf", "csr-duplicates-inf"])
# scikit-learn's own finiteness check sums the stored values (inf + -inf warns)
@pytest.mark.filterwarnings("ignore:invalid value encountered in reduce:RuntimeWarning")
def test_nonfinite_message_is_scikit_learns_on_the_values_as_passed(case):
    """Finiteness is checked by the magnitude scan (one pass over the values,
    not two); the error is still scikit-learn's own for X as passed: stored
    duplicates ``inf`` and ``-inf`` are reported as an infinity, not as the NaN
    their sum would be."""
    from sklearn.utils import check_array

    from skbandit import Banditron

    X = np.ones((3, 4))
    if case == "dense-nan":
        X[1, 2] = np.nan
    elif case == "csr-inf":
        X[2, 3] = np.inf
        X = sp.csr_matrix(X)
    else:
        X = sp.csr_matrix(
            (np.array([1.0, np.inf, -np.inf]), np.array([0, 1, 1]), [0, 1, 3, 3]),
            shape=(3, 4),
        )
    est = Banditron(random_state=0)
    with pytest.raises(ValueError) as expected:
        check_array(X, accept_sparse="csr", estimator=est, input_name="X")
    with pytest.raises(ValueError) as got:
        est.partial_fit(X, [0, 1, 0], classes=[0, 1])
    assert str(got.value) == str(expected.value)
    assert not hasattr(est, "classes_")


# --------------------------------------------------------------------------------------
# parameters


def _param_cases():
    return [
        pytest.param(e, params, match, id=f"{e.name}-{params}")
        for e in ENTRIES
        for params, match in e.invalid_params
    ]


def _param_cases_by_method():
    """Each invalid setting through ``fit`` or ``partial_fit``, in turn (both
    validate the parameters in the same place), so that every learner with two
    or more invalid settings is checked through both."""
    return [
        pytest.param(*p.values, method, id=f"{p.id}-{method}")
        for i, p in enumerate(_param_cases())
        for method in [("fit", "partial_fit")[i % 2]]
    ]


@pytest.mark.parametrize("entry, params, match, method", _param_cases_by_method())
def test_invalid_parameters_are_rejected(entry, params, match, method):
    X, y = _stream()
    est = entry.make(random_state=SEED, **params)
    kwargs = {"classes": CLASSES} if method == "partial_fit" else {}
    with pytest.raises(InvalidParameterError, match=match) as info:
        getattr(est, method)(X, y, **kwargs)
    assert isinstance(info.value, ValueError)
    with pytest.raises(NotFittedError):
        est.predict(X)


@pytest.mark.parametrize("entry, params, match", _param_cases())
def test_invalid_parameter_mid_stream_leaves_state_unchanged(entry, params, match):
    est, X_cont, y_cont = _fitted(entry)
    good = {name: getattr(est, name) for name in params}
    snap = snapshot(est)
    twin = copy.deepcopy(est)
    est.set_params(**params)
    with pytest.raises(InvalidParameterError, match=match):
        est.partial_fit(X_cont[:10], y_cont[:10])
    assert_same_state(est, snap)
    est.set_params(**good)
    _continue_and_compare(est, twin, X_cont, y_cont)


def _edge_cases():
    return [
        pytest.param(e, params, id=f"{e.name}-{params}")
        for e in ENTRIES
        for params in e.valid_edge_params
    ]


@pytest.mark.parametrize("entry, params", _edge_cases())
def test_boundary_parameters_are_accepted(entry, params):
    X, y = _stream()
    est = entry.make(random_state=SEED, **params).fit(X, y)
    assert est.t_ == entry.make().get_params()["max_iter"] * len(y)
    for name in est._state_attrs:
        assert np.isfinite(getattr(est, name)).all(), name
    est.partial_fit(X, y)


# ----------------------------------------------------------- label encoding
def _searched(y, classes):
    """The codes of the binary search (``BanditFeedback._encode``'s general
    path): the index of each label in the sorted classes."""
    codes = np.searchsorted(classes, y)
    assert np.all(classes[np.minimum(codes, len(classes) - 1)] == y)
    return codes


@pytest.mark.parametrize(
    ("classes", "labels", "unknown"),
    [
        (np.arange(9), np.arange(9), [-1, 9, 3000]),
        (np.array([-5, -2, 0, 7, 100]), None, [-6, -3, 8, 101]),
        # a class below what the labels' dtype holds
        (np.array([-3, 5, 6]), np.array([5, 6], dtype=np.uint8), [0, 4, 7]),
        (np.array([3, 4, 250], dtype=np.uint64), np.array([3, 4, 250]), [2, 5]),
        (np.array([1, 2**62]), None, [2, 2**62 - 1]),  # too wide: searched
        (np.array([0, 2**63 + 5], dtype=np.uint64), None, [1, 2**63]),  # > 2**62
        (np.array([0.0, 2.0, 4.0]), None, [1.0, 5.0]),  # not integers: searched
        (np.array(["a", "b", "c"]), None, ["d"]),
    ],
)
def test_label_codes_are_the_index_in_the_sorted_classes(classes, labels, unknown):
    """Integer labels are encoded by a look-up table when their classes span
    few values (``_table_codes``), others by a binary search: both give each
    label's index in the sorted classes, whatever the dtypes; a label that is
    not a class (between two classes, below or above them) is named in the
    same error."""
    rng = np.random.default_rng(0)
    labels = classes if labels is None else labels
    for n in (1, 7, 1023, 1024, 3000):  # searched below 1,024 labels
        y = labels[rng.integers(0, len(labels), size=n)]
        codes = BanditFeedback(y)._encode(classes)
        assert codes.dtype == np.int32
        np.testing.assert_array_equal(codes, _searched(y, classes))
    for bad in unknown:
        for n in (2, 3000):
            y = labels[rng.integers(0, len(labels), size=n)]
            y[n // 2] = np.array(bad, dtype=labels.dtype)
            named = str(y[n // 2 : n // 2 + 1].tolist())
            with pytest.raises(
                ValueError,
                match=re.escape(f"y contains labels not in classes: {named}"),
            ):
                BanditFeedback(y)._encode(classes)
