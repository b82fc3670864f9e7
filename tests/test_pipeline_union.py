"""BanditPipeline's compiled union: the row beside its random features.

A ``FeatureUnion([(a, "passthrough"), (b, RBFSampler)])`` (optionally after
an ``OnlineStandardScaler``) runs in the compiled kernel: the features are
``(w_a u, w_b z)`` with ``z`` the sampler's random features of ``u`` and the
weights the union's ``transformer_weights``. Checked against scikit-learn's
``FeatureUnion.transform`` and against the NumPy reference
(``tests/_reference_pipeline.py``, which also registers the union for the
shared suite); the default selector's nonlinear candidate is such a
pipeline.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _reference_pipeline import Scaler, map_rows
from sklearn.kernel_approximation import Nystroem, RBFSampler
from sklearn.pipeline import FeatureUnion
from sklearn.utils._param_validation import InvalidParameterError
from test_pipeline import K, stream

from skbandit import OnlineSelector, SquareCB
from skbandit.multiclass._candidates import nonlinear_candidate
from skbandit.pipeline import make_bandit_pipeline
from skbandit.preprocessing import OnlineStandardScaler


def union(D=20, gamma=0.3, weights=None, seed=1):
    return FeatureUnion(
        [
            ("row", "passthrough"),
            ("rff", RBFSampler(n_components=D, gamma=gamma, random_state=seed)),
        ],
        transformer_weights=weights,
    )


@pytest.mark.parametrize("weights", [None, {"row": 0.1}, {"row": 0.1, "rff": 2.5}])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_union_features_match_sklearn_featureunion(weights, sparse):
    """The kernel's features equal the fitted union's ``transform`` to
    rounding: the row's block first (a CSR row's absent entries as zeros),
    then the random features, each times its weight. Catches the blocks in
    the wrong order, a weight ignored or given to the other block, and a CSR
    row's stored entries only."""
    X, y = stream(d=6, sparse=sparse)
    Xin = sp.csr_matrix(X) if sparse else X
    pipe = make_bandit_pipeline(union(weights=weights), SquareCB(), random_state=0)
    pipe.partial_fit(Xin, y, classes=np.arange(K))
    fitted = pipe.steps_[0][1]
    kernel = pipe._make_kernel()
    Z = np.array([kernel.py_map(np.ascontiguousarray(x)) for x in X[:25]])
    assert Z.shape == (25, 6 + 20)
    np.testing.assert_allclose(Z, fitted.transform(X[:25]), rtol=0, atol=1e-13)
    # the learner on the kernel's features: one weight per feature of both
    # blocks; a CSR stream plays and learns as its dense copy, bit for bit
    assert pipe.learner_.coef_.shape == (K, 26)
    dense = make_bandit_pipeline(union(weights=weights), SquareCB(), random_state=0)
    dense.partial_fit(X, y, classes=np.arange(K))
    np.testing.assert_array_equal(pipe.learner_.coef_, dense.learner_.coef_)
    assert pipe.n_mistakes_ == dense.n_mistakes_


def test_union_after_the_scaler_plays_as_the_learner_on_the_reference_features():
    """Scaler then union in the kernel: SquareCB's state and plays equal
    SquareCB's on the NumPy reference features ``(0.1 u, 2 z(u))``, bit for
    bit (``u`` the row scaled with the statistics of the rows before it).
    Catches the raw row ``x`` in the row's block instead of ``u``."""
    X, y = stream()
    steps = union(D=16, gamma="scale", weights={"row": 0.1, "rff": 2.0}, seed=7)
    pipe = make_bandit_pipeline(
        OnlineStandardScaler(), steps, SquareCB(), random_state=3
    )
    pipe.partial_fit(X, y, classes=np.arange(K))
    sampler = RBFSampler(n_components=16, gamma=1.0 / X.shape[1], random_state=7)
    sampler.fit(X[:1])
    Z = map_rows(X, Scaler(X.shape[1]), sampler, True, True, (0.1, 2.0))
    ref = SquareCB(random_state=3).partial_fit(Z, y, classes=np.arange(K))
    assert pipe.n_mistakes_ == ref.n_mistakes_
    np.testing.assert_array_equal(pipe.learner_.coef_, ref.coef_)
    np.testing.assert_array_equal(pipe.learner_.intercept_, ref.intercept_)
    # the union's sampler took gamma = 1 / d after the scaler, and is fitted
    fitted = pipe.steps_[1][1].transformer_list[1][1]
    assert fitted.gamma == 1.0 / X.shape[1]
    np.testing.assert_array_equal(fitted.random_weights_, sampler.random_weights_)


def test_the_unions_sampler_is_seeded_by_the_pipeline():
    """A union's ``RBFSampler`` left ``random_state=None`` takes a seed drawn
    from the pipeline's, as a step's own would: the same pipeline seed gives
    the same features, another seed others."""
    X, y = stream()

    def weights(seed):
        steps = union(gamma="scale", seed=None)
        pipe = make_bandit_pipeline(
            OnlineStandardScaler(), steps, SquareCB(), random_state=seed
        ).partial_fit(X, y, classes=np.arange(K))
        return pipe.steps_[1][1].transformer_list[1][1].random_weights_

    np.testing.assert_array_equal(weights(4), weights(4))
    assert not np.array_equal(weights(4), weights(5))


@pytest.mark.parametrize("bad", [np.nan, np.inf, "0.1", True])
def test_a_union_weight_must_be_a_finite_number(bad):
    """A weight that is not a finite real number is refused by name before
    anything changes, also mid-stream."""
    X, y = stream()
    pipe = make_bandit_pipeline(
        OnlineStandardScaler(), union(gamma="scale"), SquareCB(), random_state=0
    ).partial_fit(X[:50], y[:50], classes=np.arange(K))
    coef = pipe.learner_.coef_.copy()
    pipe.steps[1][1].set_params(transformer_weights={"row": bad})
    with pytest.raises(InvalidParameterError, match="weight of 'row'"):
        pipe.partial_fit(X[50:60], y[50:60])
    np.testing.assert_array_equal(pipe.learner_.coef_, coef)
    assert pipe.t_ == 50


@pytest.mark.parametrize(
    "transformers",
    [
        [("rff", RBFSampler()), ("row", "passthrough")],  # the row second
        [("row", "passthrough"), ("ny", Nystroem())],
        [("row", "passthrough"), ("a", RBFSampler()), ("b", RBFSampler())],
        [("row", "drop"), ("rff", RBFSampler())],
    ],
    ids=["order", "nystroem", "three", "drop"],
)
def test_another_union_after_the_scaler_is_refused(transformers):
    """Only ``"passthrough"`` then one ``RBFSampler`` has a compiled path:
    any other union after the online scaler is refused, naming the rule."""
    X, y = stream()
    pipe = make_bandit_pipeline(
        OnlineStandardScaler(), FeatureUnion(transformers), SquareCB()
    )
    with pytest.raises(InvalidParameterError, match="FeatureUnion of 'passthrough'"):
        pipe.partial_fit(X, y, classes=np.arange(K))


def test_the_default_nonlinear_candidate_reads_the_row_beside_its_features():
    """The selector's nonlinear candidate learns on ``(0.1 u, z(u))``: ``d``
    weights for the standardised row, 1,000 for the random features, and
    its first block is the scaled row the reference computes; its SquareCB
    starts at ``initial_reward=0.2`` and steps by ``AdaGrad(0.1)``."""
    X, y = stream(n=200, d=5)
    sel = OnlineSelector(random_state=0).partial_fit(X, y, classes=np.arange(K))
    cand = sel.candidates_[0]
    assert cand.learner_.coef_.shape == (K, 5 + 1000)
    params = nonlinear_candidate().get_params()
    assert params["featureunion__transformer_weights"] == {"standardised": 0.1}
    assert params["squarecb__initial_reward"] == 0.2
    assert params["squarecb__step_size"].learning_rate == 0.1
    assert cand.learner_.initial_reward == 0.2
    scaler = Scaler(5)
    for x in X:
        scaler.update(x)
    z = cand._make_kernel().py_map(np.ascontiguousarray(X[0]))
    np.testing.assert_array_equal(z[:5], scaler.scale(X[0]) * 0.1)
