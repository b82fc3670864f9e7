"""The compiled regression oracle (``skbandit._core._oracle``) against its NumPy
twin (``_reference_oracle``), on the same random draws: bit for bit."""

from __future__ import annotations

import _reference_oracle as ref
import numpy as np
import pytest
from numpy.testing import assert_array_equal

from skbandit._core._oracle import STEP_KINDS, RegressionOracle

# the twin's oracle names -> the compiled step-size rules (skbandit.optim names)
CODES = {
    "normalized": STEP_KINDS["normalized"],
    "adagrad": STEP_KINDS["adagrad"],
    "sgd": STEP_KINDS["constant"],
}


def _compiled(state, regressor, **params):
    st = state
    return RegressionOracle(
        st["coef_"].T, st["intercept_"], st["scale_"].T, st["grad_sq_"],
        st["intercept_grad_sq_"], st["norm_sum_"], st["n_updates_"],
        (CODES[regressor], params["learning_rate"], True), params["fit_intercept"],
        params["step_cap"], params["shared_scale"],
    )  # fmt: skip


def _rows(rng, n, d):
    """Rows with zeros (skipped by the oracle), repeated scales and a few
    scale growths, as (dense values, column indices, stored values)."""
    X = rng.normal(size=(n, d)) * rng.choice([0.5, 1.0, 4.0], size=(n, d))
    X[rng.random((n, d)) < 0.4] = 0.0
    X[n // 3] = 0.0  # an empty row
    for x in X:
        cols = np.flatnonzero(x).astype(np.int32)
        yield x, cols, x[cols]


@pytest.mark.parametrize("regressor", list(CODES))
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("shared_scale", [True, False])
@pytest.mark.parametrize("step_cap", [1.0, 0.3, 0.0])
@pytest.mark.parametrize("form", ["dense", "sparse"])
def test_compiled_oracle_matches_its_numpy_twin(
    regressor, fit_intercept, shared_scale, step_cap, form
):
    """Every state array equal after each update, for weights (importance
    weights) and targets in [0, 1], scores from the current state; and the
    same flag."""
    k, d, n = 3, 7, 120
    rng = np.random.default_rng(len(regressor) + 2 * fit_intercept + shared_scale)
    params = {
        "learning_rate": 0.7 if regressor != "sgd" else 0.05,
        "fit_intercept": fit_intercept,
        "step_cap": step_cap,
        "shared_scale": shared_scale,
    }
    st_c, st_r = ref.fresh_state(k, d), ref.fresh_state(k, d)
    st_c["intercept_"][:] = st_r["intercept_"][:] = 0.5 if fit_intercept else 0.0
    compiled = _compiled(st_c, regressor, **params)
    twin = ref.RegressionOracle(st_r, regressor=regressor, **params)
    for x, cols, vals in _rows(rng, n, d):
        a = int(rng.integers(k))
        row = list(zip(cols.tolist(), vals.tolist(), strict=True))
        score = twin.predict(a, row)
        target, weight = float(rng.random() < 0.4), float(rng.choice([1.0, 2.5]))
        if form == "dense":
            ok = compiled.py_update(x, None, a, score, target, weight)
            row = list(enumerate(x.tolist()))
        else:
            ok = compiled.py_update(vals, cols, a, score, target, weight)
        assert ok == twin.update(a, row, score, target, weight)
        for name in st_r:
            assert_array_equal(st_c[name], st_r[name], err_msg=name)
    # the rule was exercised: updates counted, weights moved, scales set
    assert st_r["n_updates_"].sum() == n
    assert np.any(st_r["coef_"] != 0.0)
    if regressor == "normalized":
        assert np.all(st_r["norm_sum_"] > 0.0)


def test_a_non_finite_step_is_refused_before_any_write():
    """With a step cap, a row whose ``||x||^2`` overflows gives False and
    leaves the weights alone (the kernel then stops the pass)."""
    st = ref.fresh_state(2, 3)
    oracle = _compiled(
        st, "sgd", learning_rate=0.1, fit_intercept=False, step_cap=1.0,
        shared_scale=False,
    )  # fmt: skip
    x = np.array([1e200, 0.0, 1e200])
    assert not oracle.py_update(x, None, 1, 0.0, 1.0, 1.0)
    assert not np.any(st["coef_"])
    assert st["n_updates_"].tolist() == [0, 1]


@pytest.mark.parametrize(
    ("val", "ind", "a", "match"),
    [
        (np.ones(2), None, 0, "dense row needs 3 values"),
        (np.ones(2), np.array([0], np.int32), 0, "differ in length"),
        (np.ones(2), np.array([2, 1], np.int32), 0, "increasing"),
        (np.ones(1), np.array([3], np.int32), 0, "increasing"),
        (np.ones(3), None, 2, "action 2 out of range"),
    ],
)
def test_py_update_refuses_a_bad_row_and_leaves_the_state(val, ind, a, match):
    st = ref.fresh_state(2, 3)
    before = {name: v.copy() for name, v in st.items()}
    oracle = _compiled(
        st, "normalized", learning_rate=0.5, fit_intercept=True, step_cap=1.0,
        shared_scale=True,
    )  # fmt: skip
    with pytest.raises(ValueError, match=match):
        oracle.py_update(val, ind, a, 0.0, 1.0, 1.0)
    for name in st:
        assert_array_equal(st[name], before[name], err_msg=name)


def test_inconsistent_state_arrays_are_refused():
    st = ref.fresh_state(2, 3)
    st["norm_sum_"] = np.zeros(3)
    with pytest.raises(ValueError, match="inconsistent shapes"):
        _compiled(
            st, "sgd", learning_rate=0.1, fit_intercept=True, step_cap=1.0,
            shared_scale=False,
        )  # fmt: skip


@pytest.mark.parametrize("bad", ["b", "S", "G", "G transposed", "Gb", "N", "n_upd"])
def test_inconsistent_state_shapes_are_refused(bad):
    """Every state array must match the (d, k) of W (G class-major, (k, d)):
    one array of a wrong length (the others right) is refused, and so is a
    feature-major (d, k) G."""
    d, k = 4, 3
    arrays = {
        "W": np.zeros((d, k)),
        "b": np.zeros(k),
        "S": np.zeros((d, k)),
        "G": np.zeros((k, d)),
        "Gb": np.zeros(k),
        "N": np.zeros(k),
        "n_upd": np.zeros(k, dtype=np.int64),
    }
    if bad == "G transposed":
        arrays["G"] = np.zeros((d, k))
    else:
        arr = arrays[bad]
        shape = (d + 1, k) if arr.ndim == 2 else k + 1
        arrays[bad] = np.zeros(shape, dtype=arr.dtype)
    with pytest.raises(ValueError, match="inconsistent shapes"):
        RegressionOracle(
            arrays["W"], arrays["b"], arrays["S"], arrays["G"], arrays["Gb"],
            arrays["N"], arrays["n_upd"], (STEP_KINDS["normalized"], 0.5, False),
            True, 1.0, True,
        )  # fmt: skip


@pytest.mark.parametrize(
    ("rule", "match"),
    [
        ((STEP_KINDS["adagrad"], 0.5, False), "per coordinate"),
        ((7, 0.5, True), "unknown step-size rule"),
        ((STEP_KINDS["constant"], 0.0, False), "learning rate must be > 0"),
        ((STEP_KINDS["normalized"], float("nan"), False), "learning rate must be > 0"),
    ],
)
def test_refuses_a_rule_it_cannot_play(rule, match):
    """The oracle keeps one accumulator per weight: AdaGrad-norm (one
    accumulator) is refused, as are an unknown code and a rate that is not
    positive (a NaN rate would silently freeze or poison the weights)."""
    k, d = 3, 4
    with pytest.raises(ValueError, match=match):
        RegressionOracle(
            np.zeros((d, k)), np.zeros(k), np.zeros((d, 1)), np.zeros((k, d)),
            np.zeros(k), np.zeros(k), np.zeros(k, dtype=np.int64), rule,
            True, 1.0, True,
        )  # fmt: skip
