"""The feature-major layout of the linear learners' weights.

Every linear kernel keeps its weights feature-major (``LinearKernel`` in
skbandit/_core/_kernel.pxd: ``W`` is (d, k), a feature's ``k`` weights
adjacent), and the estimator's (k, d) arrays named in ``_feature_major``
(``coef_``, the averaging accumulators, SOBA's ``theta_`` and ``A_diag_``,
SquareCB's ``scale_``, OffsetTree's ``node_coef_``) are the
Fortran-ordered transposes of those arrays, updated in place. The NumPy
references (``tests/_reference*.py``) check the values bit for bit; these tests
check the layout itself, and that a learner given its arrays class-major (an
assignment, a pickle from before the layout) learns exactly as one that never
left it.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from _registry import ENTRIES, entry_params
from numpy.testing import assert_array_equal


def _feature_major_state(est) -> list[str]:
    return [n for n in est._feature_major if n in est._state_attrs]


FM_ENTRIES = [e for e in ENTRIES if _feature_major_state(e.cls(**e.params))]


def _stream(n=240, d=7, k=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X[rng.random((n, d)) < 0.3] = 0.0
    y = np.argmax(X @ rng.standard_normal((d, k)), axis=1)
    return X, y


def test_every_linear_learner_declares_its_layout():
    """The registry holds the linear learners (caught: a learner whose
    ``_feature_major`` was dropped falls out of the tests below)."""
    names = {e.cls.__name__ for e in FM_ENTRIES}
    assert {
        "Banditron", "SOBA", "Gaptron", "ConservativeOneVsAll", "OffsetTree",
        "SquareCB", "BanditPassiveAggressive", "MulticlassPerceptron",
        "SeparableOneVsAll",
    } <= names  # fmt: skip


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("entry", entry_params(FM_ENTRIES))
def test_state_is_feature_major_and_updated_in_place(entry, sparse):
    """After a fit the arrays are Fortran-ordered (k, d), and later calls
    update the same objects (caught: a layout check that copies the arrays on
    every call, a class-major array left in place)."""
    X, y = _stream()
    X = sp.csr_matrix(X) if sparse else X
    est = entry.cls(random_state=0, **entry.params)
    est.partial_fit(X[:120], y[:120], classes=np.unique(y))
    names = _feature_major_state(est)
    arrays = {n: getattr(est, n) for n in names}
    for name, value in arrays.items():
        assert value.ndim == 2 and value.shape[1] == X.shape[1], name
        assert value.flags.f_contiguous and value.flags.writeable, name
    before = {n: v.copy() for n, v in arrays.items()}
    est.partial_fit(X[120:], y[120:])
    for name, value in arrays.items():
        assert getattr(est, name) is value, name
    assert any(not np.array_equal(before[n], arrays[n]) for n in names)


@pytest.mark.parametrize("how", ["assigned", "pickled"])
@pytest.mark.parametrize("entry", entry_params(FM_ENTRIES))
def test_class_major_arrays_learn_as_feature_major_ones(entry, how):
    """A fitted learner whose (k, d) arrays are replaced by C-ordered copies
    (assigned by a user, or unpickled from a version that stored them so)
    continues bit for bit as the untouched learner, and its arrays are
    feature-major again after the call (caught: the kernel refusing the
    arrays, a conversion that loses the values or binds a copy the kernel
    then updates instead of the attribute)."""
    X, y = _stream(seed=1)
    ref = entry.cls(random_state=0, **entry.params)
    ref.partial_fit(X[:120], y[:120], classes=np.unique(y))
    est = copy.deepcopy(ref)
    names = _feature_major_state(est)
    if how == "assigned":
        for name in names:
            setattr(est, name, np.ascontiguousarray(getattr(est, name)))
    else:
        state = est.__getstate__()
        for name in names:
            state[name] = np.ascontiguousarray(state[name])
        est = pickle.loads(pickle.dumps(est))
        est.__setstate__(state)
    for name in names:
        assert getattr(est, name).flags.c_contiguous, name
    ref.partial_fit(X[120:], y[120:])
    est.partial_fit(X[120:], y[120:])
    for name in ref._state_attrs:
        assert_array_equal(getattr(est, name), getattr(ref, name), err_msg=name)
    for name in names:
        assert getattr(est, name).flags.f_contiguous, name
    assert_array_equal(est.decision_function(X), ref.decision_function(X))


def test_dense_scores_use_the_class_major_product():
    """``decision_function`` on dense rows multiplies by a class-major copy of
    the weights: the scores equal, bit for bit, the product with the weights
    stored class-major (the operand of the layout before), whatever the
    layout BLAS would otherwise prefer (caught: multiplying by ``coef_.T`` of
    the Fortran-ordered array, another summation order)."""
    from skbandit import Banditron

    rng = np.random.default_rng(3)
    X = rng.standard_normal((300, 97))
    est = Banditron(average=False, random_state=0).partial_fit(
        X, np.argmax(X[:, :5], axis=1), classes=np.arange(5)
    )
    W = np.ascontiguousarray(est.coef_)
    # one row (BLAS's matrix-vector path, where the two layouts' sums differ
    # on this data), a few, many
    for rows in (X[:1], X[:7], X):
        assert_array_equal(est.decision_function(rows), rows @ W.T)
