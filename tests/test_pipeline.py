"""BanditPipeline and OnlineStandardScaler: what only they do.

The shared suite (``tests/_reference_pipeline.py`` registers the pipeline)
covers the protocol, chunk invariance, logged feedback against the NumPy
reference, rollback and scikit-learn's checks; here: the compiled maps against
the reference and scikit-learn's ``RBFSampler``, the Python maps, the
scaler's contract, the selector's candidates and the parameters.
"""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from _data import make_stream
from _helpers import assert_same_learner, count_state_copies
from _reference_pipeline import COS_BOUND, Scaler, map_rows, rff_cos
from sklearn.base import clone
from sklearn.kernel_approximation import Nystroem, RBFSampler
from sklearn.preprocessing import PolynomialFeatures
from sklearn.utils._param_validation import InvalidParameterError

from skbandit import Banditron, OnlineSelector, SquareCB
from skbandit.multiclass._selector import default_candidates
from skbandit.pipeline import BanditPipeline, make_bandit_pipeline
from skbandit.preprocessing import OnlineStandardScaler

K = 4


def stream(n=300, d=5, seed=0, sparse=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 4.0, d) + rng.normal(size=d)
    X[:, 1] = 3.0  # a constant feature: only centred
    if sparse:
        X[rng.random(X.shape) < 0.5] = 0.0
    y = (np.abs(X[:, 0]) + X[:, 2] > 1.0).astype(int) + 2 * (X[:, 3] > 0)
    return X, y


def rff_scaler_pipeline(D=20, seed=0, learner=None):
    return make_bandit_pipeline(
        OnlineStandardScaler(),
        RBFSampler(n_components=D, gamma="scale", random_state=7),
        learner if learner is not None else SquareCB(),
        random_state=seed,
    )


def test_compiled_maps_play_as_the_learner_on_the_reference_features():
    """Scaler then random features in the kernel: the learner's state and
    plays equal SquareCB's on the NumPy reference features, bit for bit (row
    t scaled with the statistics of rows before it, cos of the C library)."""
    X, y = stream()
    pipe = rff_scaler_pipeline(seed=3).partial_fit(X, y, classes=np.arange(K))
    sampler = RBFSampler(n_components=20, gamma=1.0 / X.shape[1], random_state=7)
    sampler.fit(X[:1])
    scaler = Scaler(X.shape[1])
    Z = map_rows(X, scaler, sampler, update=True)
    ref = SquareCB(random_state=3).partial_fit(Z, y, classes=np.arange(K))
    assert pipe.n_mistakes_ == ref.n_mistakes_
    np.testing.assert_array_equal(pipe.learner_.coef_, ref.coef_)
    np.testing.assert_array_equal(pipe.scaler_mean_, scaler.mean)
    np.testing.assert_array_equal(pipe.scaler_var_sum_, scaler.m2)
    assert pipe.scaler_count_[0] == X.shape[0] == pipe.learner_.t_


def test_random_features_match_sklearn_rbfsampler():
    """The kernel's features equal scikit-learn's ``RBFSampler.transform``
    to rounding (its product and cosine may differ in the last bits)."""
    X, y = stream(d=6)
    pipe = make_bandit_pipeline(
        RBFSampler(n_components=50, gamma=0.3, random_state=1), SquareCB()
    ).partial_fit(X, y, classes=np.arange(K))
    sampler = pipe.steps_[0][1]
    kernel = pipe._make_kernel()
    Z = np.array([kernel.py_map(np.ascontiguousarray(x)) for x in X[:20]])
    np.testing.assert_allclose(Z, sampler.transform(X[:20]), rtol=0, atol=1e-13)


def _cos_arguments() -> np.ndarray:
    """Arguments of the random features' cosine: near 0, around every
    quadrant's boundary and multiple of pi/2 (where the reduction cancels),
    typical features, large ones up to the bound, just past it, and huge."""
    rng = np.random.default_rng(0)
    near = np.arange(-64, 65) * (np.pi / 4)
    return np.concatenate(
        [
            rng.normal(scale=3.0, size=20_000),
            rng.uniform(-1e-3, 1e-3, size=1_000),
            np.nextafter(near, np.inf),
            np.nextafter(near, -np.inf),
            near,
            np.arange(-(2**10), 2**10) * (np.pi / 2),
            rng.uniform(-COS_BOUND, COS_BOUND, size=20_000),
            [COS_BOUND, -COS_BOUND, np.nextafter(COS_BOUND, np.inf), 1e8, -3e15],
            [0.0, -0.0, 1e-300, np.pi / 4, 3 * np.pi / 4],
        ]
    )


def test_random_feature_cosine_is_accurate():
    """The kernel's cosine (fdlibm's reduction and polynomials) is within
    3e-16 of the C library's on every argument range, including the
    boundaries of the quadrants and arguments past the bound."""
    from skbandit._core._feature_map import cos_array

    x = _cos_arguments()
    out = np.empty_like(x)
    cos_array(x, out)
    libm = np.array([math.cos(v) for v in x])
    err = np.abs(out - libm)
    assert err.max() <= 3e-16, x[np.argmax(err)]
    # past the bound the C library's own
    far = np.abs(x) > COS_BOUND
    assert far.sum() == 3
    np.testing.assert_array_equal(out[far], libm[far])


def test_random_feature_cosine_matches_its_numpy_reference_bit_for_bit():
    """The NumPy reference of the cosine (elementwise operations in the
    kernel's order) is the kernel's, bit for bit; so is a kernel row of
    features whose arguments all lie within the bound (the vectorised loop)
    and one with an argument past it (the loop with the fallback)."""
    from skbandit._core._feature_map import cos_array

    x = _cos_arguments()
    out = np.empty_like(x)
    cos_array(x, out)
    np.testing.assert_array_equal(out, rff_cos(x))
    rng = np.random.default_rng(1)
    sampler = RBFSampler(n_components=64, gamma=0.5, random_state=0).fit(
        np.zeros((1, 3))
    )
    pipe = make_bandit_pipeline(sampler, SquareCB()).partial_fit(
        rng.normal(size=(2, 3)), [0, 1], classes=np.arange(K)
    )
    kernel = pipe._make_kernel()
    for x in (rng.normal(size=3), np.array([1e7, 0.0, -2.0])):
        Z = map_rows(x[None], None, pipe.steps_[0][1], update=False)[0]
        np.testing.assert_array_equal(kernel.py_map(x), Z)


def test_python_maps_run_before_the_learner():
    """A fixed map in Python: the pipeline is the learner on its output."""
    X, y = stream()
    pipe = make_bandit_pipeline(
        PolynomialFeatures(degree=2), SquareCB(), random_state=2
    )
    pipe.partial_fit(X, y, classes=np.arange(K))
    Z = PolynomialFeatures(degree=2).fit_transform(X)
    ref = SquareCB(random_state=2).partial_fit(Z, y, classes=np.arange(K))
    np.testing.assert_array_equal(pipe.learner_.coef_, ref.coef_)
    np.testing.assert_array_equal(pipe.predict(X), ref.predict(Z))
    assert pipe.n_features_in_ == X.shape[1]


def test_python_map_then_compiled_scaler_is_chunk_invariant():
    X, y = stream()
    steps = [PolynomialFeatures(degree=2), OnlineStandardScaler(), SquareCB()]
    one = make_bandit_pipeline(*map(clone, steps), random_state=0)
    one.partial_fit(X, y, classes=np.arange(K))
    chunked = make_bandit_pipeline(*map(clone, steps), random_state=0)
    for lo in range(0, X.shape[0], 37):
        chunked.partial_fit(X[lo : lo + 37], y[lo : lo + 37], classes=np.arange(K))
    np.testing.assert_array_equal(one.learner_.coef_, chunked.learner_.coef_)
    np.testing.assert_array_equal(one.scaler_mean_, chunked.scaler_mean_)
    assert one.n_mistakes_ == chunked.n_mistakes_


def test_map_fitted_on_the_first_call_rows():
    """Nystroem is fitted once, on the rows of the first call (its number of
    components is then at most that call's rows), and never refitted."""
    X, y = stream()
    pipe = make_bandit_pipeline(Nystroem(n_components=30, random_state=0), SquareCB())
    with pytest.warns(UserWarning, match="n_components"):
        pipe.partial_fit(X[:10], y[:10], classes=np.arange(K))
    components = pipe.steps_[0][1].components_.copy()
    assert components.shape[0] == 10
    pipe.partial_fit(X[10:], y[10:])
    np.testing.assert_array_equal(pipe.steps_[0][1].components_, components)
    assert pipe.learner_.coef_.shape == (K, 10)


@pytest.mark.parametrize("with_scaler", [True, False])
def test_dense_and_csr_rows_play_alike(with_scaler):
    X, y = stream(sparse=True)
    steps = [RBFSampler(n_components=16, gamma=0.2, random_state=4), SquareCB()]
    if with_scaler:
        steps.insert(0, OnlineStandardScaler())
    dense = make_bandit_pipeline(*map(clone, steps), random_state=1)
    dense.partial_fit(X, y, classes=np.arange(K))
    csr = make_bandit_pipeline(*map(clone, steps), random_state=1)
    csr.partial_fit(sp.csr_matrix(X), y, classes=np.arange(K))
    np.testing.assert_array_equal(dense.learner_.coef_, csr.learner_.coef_)
    np.testing.assert_array_equal(dense.scaler_var_sum_, csr.scaler_var_sum_)
    np.testing.assert_array_equal(
        dense.decision_function(X), csr.decision_function(sp.csr_matrix(X))
    )


def test_pickle_mid_stream_resumes_the_stream():
    X, y = stream()
    whole = rff_scaler_pipeline().partial_fit(X, y, classes=np.arange(K))
    half = rff_scaler_pipeline().partial_fit(X[:150], y[:150], classes=np.arange(K))
    resumed = pickle.loads(pickle.dumps(half)).partial_fit(X[150:], y[150:])
    np.testing.assert_array_equal(whole.learner_.coef_, resumed.learner_.coef_)
    np.testing.assert_array_equal(whole.scaler_mean_, resumed.scaler_mean_)
    assert whole.n_mistakes_ == resumed.n_mistakes_


def test_acting_and_scoring_write_nothing():
    """``sample_actions``, ``predict`` and ``exploration_distribution`` leave
    the running statistics as they are (they are updated when a row is
    learnt)."""
    X, y = stream()
    pipe = rff_scaler_pipeline().partial_fit(X[:100], y[:100], classes=np.arange(K))
    before = (
        pipe.scaler_mean_.copy(),
        pipe.scaler_var_sum_.copy(),
        pipe.scaler_count_[0],
    )
    pipe.sample_actions(X[100:150])
    pipe.predict(X[100:150])
    pipe.exploration_distribution(X[100:150])
    np.testing.assert_array_equal(pipe.scaler_mean_, before[0])
    np.testing.assert_array_equal(pipe.scaler_var_sum_, before[1])
    assert pipe.scaler_count_[0] == before[2]


def test_a_served_row_is_learnt_as_it_was_played():
    """Serve a row, learn its logged feedback: the statistics it is scaled
    with are the same at both times, so the learner's update is the one from
    the features it was served on (the logged round's propensity agrees)."""
    from skbandit import LoggedFeedback

    X, y = stream()
    pipe = rff_scaler_pipeline().partial_fit(X[:100], y[:100], classes=np.arange(K))
    twin = pickle.loads(pickle.dumps(pipe))
    for i in range(100, 130):
        a, p = pipe.sample_actions(X[i : i + 1])
        r = (a == y[i : i + 1]).astype(float)
        pipe.partial_fit(X[i : i + 1], LoggedFeedback(a, r, p))
        twin.partial_fit(X[i : i + 1], y[i : i + 1])
    np.testing.assert_array_equal(pipe.learner_.coef_, twin.learner_.coef_)


def test_selector_runs_a_compiled_pipeline_as_a_candidate():
    X, y = stream(n=400)
    pipe = rff_scaler_pipeline()
    sel = OnlineSelector(candidates=[*default_candidates(), pipe], random_state=0)
    sel.partial_fit(X, y, classes=np.arange(K))
    cand = sel.candidates_[-1]
    assert cand.scaler_count_[0] == sel.t_ == cand.learner_.t_
    # the candidate's statistics are the stream's
    ref = OnlineStandardScaler().partial_fit(X)
    np.testing.assert_array_equal(cand.scaler_mean_, ref.mean_)
    chunked = OnlineSelector(candidates=[*default_candidates(), pipe], random_state=0)
    for lo in range(0, 400, 150):
        chunked.partial_fit(X[lo : lo + 150], y[lo : lo + 150], classes=np.arange(K))
    np.testing.assert_array_equal(
        chunked.candidates_[-1].learner_.coef_, cand.learner_.coef_
    )


def test_selector_refuses_a_pipeline_without_compiled_path():
    X, y = stream()
    pipe = make_bandit_pipeline(PolynomialFeatures(), SquareCB())
    sel = OnlineSelector(candidates=[SquareCB(), pipe])
    with pytest.raises(InvalidParameterError, match="PolynomialFeatures.*compiled"):
        sel.partial_fit(X, y, classes=np.arange(K))


@pytest.mark.parametrize(
    "steps, match",
    [
        ([("rbf", RBFSampler())], "final step .* skbandit bandit learner"),
        ([("s", SquareCB()), ("b", Banditron())], "only the final step"),
        (
            [
                ("o", OnlineStandardScaler()),
                ("p", PolynomialFeatures()),
                ("s", SquareCB()),
            ],
            "after the maps",
        ),
        ([("a", RBFSampler()), ("a", SquareCB())], "unique"),
        ([("x__y", SquareCB())], "'__'"),
        ([("max_iter", SquareCB())], "conflict"),
    ],
)
def test_bad_steps_are_refused(steps, match):
    X, y = stream()
    with pytest.raises(InvalidParameterError, match=match):
        BanditPipeline(steps).partial_fit(X, y, classes=np.arange(K))


def test_nested_parameters():
    pipe = make_bandit_pipeline(RBFSampler(n_components=5), SquareCB())
    params = pipe.get_params()
    assert params["rbfsampler__n_components"] == 5
    assert params["squarecb"] is pipe.steps[1][1]
    pipe.set_params(rbfsampler__n_components=7, squarecb=Banditron())
    assert pipe.steps[0][1].n_components == 7
    assert isinstance(pipe.named_steps["squarecb"], Banditron)
    X, y = stream()
    pipe.partial_fit(X, y, classes=np.arange(K))
    assert pipe.learner_.coef_.shape == (K, 7)
    assert clone(pipe).get_params()["rbfsampler__n_components"] == 7


def test_step_seeds_follow_the_pipeline_seed():
    X, y = stream()
    a = make_bandit_pipeline(RBFSampler(n_components=8), SquareCB(), random_state=5)
    b = make_bandit_pipeline(RBFSampler(n_components=8), SquareCB(), random_state=5)
    a.partial_fit(X, y, classes=np.arange(K))
    b.partial_fit(X, y, classes=np.arange(K))
    np.testing.assert_array_equal(
        a.steps_[0][1].random_weights_, b.steps_[0][1].random_weights_
    )
    assert a.steps[0][1].random_state is None  # the given step is not changed


# ------------------------------------------------------ OnlineStandardScaler
def test_scaler_scales_each_row_with_the_rows_before_it():
    X, _ = stream(n=50)
    U = OnlineStandardScaler().partial_fit_transform(X)
    for t in (0, 1, 2, 17, 49):
        before = X[:t]
        mean = before.mean(axis=0) if t else np.zeros(X.shape[1])
        sd = before.std(axis=0) if t else np.ones(X.shape[1])
        sd[sd < 1e-12] = 1.0
        np.testing.assert_allclose(U[t], (X[t] - mean) / sd, rtol=1e-12, atol=1e-12)


def test_scaler_is_chunk_invariant_bit_for_bit():
    X, _ = stream(n=120)
    one = OnlineStandardScaler()
    U = one.partial_fit_transform(X)
    chunked = OnlineStandardScaler()
    parts = [chunked.partial_fit_transform(X[lo : lo + 13]) for lo in range(0, 120, 13)]
    np.testing.assert_array_equal(np.vstack(parts), U)
    np.testing.assert_array_equal(one.mean_, chunked.mean_)
    np.testing.assert_array_equal(one.var_sum_, chunked.var_sum_)
    np.testing.assert_allclose(one.var_, X.var(axis=0), rtol=1e-12, atol=1e-12)


def test_scaler_transform_does_not_update():
    X, _ = stream(n=60)
    sc = OnlineStandardScaler().partial_fit(X[:30])
    first = sc.transform(X[30:])
    np.testing.assert_array_equal(sc.transform(X[30:]), first)
    assert sc.n_samples_seen_ == 30
    np.testing.assert_array_equal(sc.partial_fit_transform(X[30:31]), first[:1])


class _Fail(Exception):
    pass


def test_a_failed_pipeline_block_restores_its_learner(monkeypatch):
    """A ``BanditPipeline`` block that fails after its learner's end-of-block
    work (which advances the learner's round counter ``learner_.t_``) leaves
    the pipeline and its learner as before the call: the rollback point holds
    the learner's record too. Catches a point without the pipeline's learner
    (``learner_`` is a property, not an instance attribute)."""
    X, y = make_stream(n=60, d=5, k=3, seed=25)
    est = BanditPipeline(random_state=25).partial_fit(
        X[:30], y[:30], classes=np.arange(3)
    )
    clean = copy.deepcopy(est)
    after_block = BanditPipeline._after_block

    def failing(self, kernel):
        after_block(self, kernel)
        raise _Fail("injected")

    monkeypatch.setattr(BanditPipeline, "_after_block", failing)
    with pytest.raises(_Fail):
        est.partial_fit(X[30:], y[30:])
    monkeypatch.undo()
    assert est.learner_.t_ == clean.learner_.t_ == 30
    assert_same_learner(est, clean)


def test_batch_calls_whose_rounds_write_much_copy(monkeypatch):
    """The choice counts the journal a block may record as its work, not only
    its input: a 300-row call of a pipeline of 256 random features of 4
    features (each round writes hundreds of weights from 32 bytes of input;
    by its input alone it would journal) copies its state, a one-row call
    does not."""
    monkeypatch.setattr("skbandit._base._transaction._COPY_RATIO", 16)
    X, y = make_stream(n=301, d=4, k=K, seed=29)
    est = make_bandit_pipeline(
        OnlineStandardScaler(),
        RBFSampler(n_components=256, gamma=0.25, random_state=0),
        SquareCB(),
        random_state=0,
    )
    calls = count_state_copies(monkeypatch, BanditPipeline)
    est.partial_fit(X[:300], y[:300], classes=np.arange(K))
    assert calls["n"] == 1
    assert est._model_bytes() * 16 > 300 * 4 * 8  # (the input alone: journal)
    est.partial_fit(X[300:], y[300:])
    assert calls["n"] == 1
