"""SquareCB (Foster & Rakhlin 2020) with the NAG / AdaGrad / SGD oracles: the
kernel against the NumPy reference, inverse gap weighting, NAG's per-regressor
state and scale invariance."""

from __future__ import annotations

import copy
import math

import _reference_squarecb as ref
import numpy as np
import pytest
import scipy.sparse as sp
from _data import label_values, make_stream
from _helpers import assert_benchmark_rows, run_benchmark
from _reference_oracle import RegressionOracle
from numpy.testing import assert_allclose, assert_array_equal

from skbandit import BanditFeedback, LoggedFeedback, SquareCB
from skbandit.exploration import EpsilonGreedy, InverseGap
from skbandit.linear_model._squarecb import igw_distribution
from skbandit.optim import AdaGrad, Constant, Normalized

REGRESSORS = {
    "normalized": {},
    "adagrad": {"learning_rate": 0.3},
    "sgd": {"learning_rate": 0.05},
}
# the step-size rule of each oracle (skbandit.optim)
STEP_RULES = {"normalized": Normalized, "adagrad": AdaGrad, "sgd": Constant}


def _params(regressor, **extra):
    """SquareCB's parameters with the oracle ``regressor`` at the rate of
    ``REGRESSORS`` (or ``extra``'s ``learning_rate``)."""
    rate = extra.pop("learning_rate", REGRESSORS[regressor].get("learning_rate", 0.5))
    return {"step_size": STEP_RULES[regressor](rate), **extra}


# the state the reference keeps (written from the docs, not from the estimator)
STATE = tuple(ref.fresh_state(1, 1))


@pytest.mark.parametrize("regressor", list(REGRESSORS))
@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"fit_intercept": False},
        {"importance_weighted": True, "exploration": InverseGap(3.0)},
        {"step_cap": 0.5},
        {"step_cap": 0.5, "importance_weighted": True, "learning_rate": 2.0},
        {"learning_rate": 5.0},
        {"importance_weighted": True, "learning_rate": 2.0},
        {"initial_reward": 0.0, "exploration": InverseGap(30.0)},
        {"exploration": InverseGap(3.0, exponent=0.5)},
        # other rules over the predicted rewards, through their NumPy twins
        {"exploration": EpsilonGreedy(0.05)},
        {"exploration": InverseGap(3.0, clip=False)},
        {"exploration": "softmax"},
        {"shared_scale": False},
        {"shared_scale": False, "importance_weighted": True, "learning_rate": 2.0},
    ],
    ids=[
        "default",
        "no-intercept",
        "importance",
        "cap-half",
        "cap-half-iw",
        "cap1-large-rate",
        "cap1-iw",
        "pessimistic",
        "sqrt-schedule",
        "epsilon-greedy",
        "igw-unclipped",
        "softmax",
        "per-class-scale",
        "per-class-scale-iw",
    ],
)
@pytest.mark.parametrize("container", ["dense", "csr"])
def test_partial_fit_matches_reference(regressor, extra, container):
    """Identical actions, propensities and bitwise-equal state, dense and CSR,
    over two calls (the round index continues across calls)."""
    X, y = make_stream(400, d=10, k=4, seed=3)
    X[:, 2] *= 50.0  # features of different scales
    X[:, 5] *= 0.02
    X = sp.csr_matrix(X) if container == "csr" else X
    params = _params(regressor, **extra)
    k = 4
    classes = label_values(k)
    est = SquareCB(random_state=7, **params)
    rng = np.random.default_rng(7)
    state, t0 = None, 0
    for idx in (np.arange(150), np.arange(150, 400)):
        est.partial_fit(X[idx], classes[y[idx]], classes=classes)
        U = rng.random((len(idx), 2))
        tr = ref.squarecb(X[idx], y[idx], U, k, t0=t0, state=state, **params)
        state, t0 = tr.state, t0 + len(idx)
    for name in STATE:
        assert_array_equal(getattr(est, name), state[name], err_msg=name)
    assert est.t_ == 400


@pytest.mark.parametrize("regressor", list(REGRESSORS))
def test_actions_and_propensities_match_reference(regressor):
    """The feedback log (played actions, logged propensities with tie marginals)
    is the reference's, on binary rows (frequent exact score ties)."""
    X, y = make_stream(300, d=8, k=3, kind="binary", seed=5)
    params = _params(regressor)
    classes = label_values(3)
    fb = BanditFeedback(classes[y])
    est = SquareCB(random_state=2, **params).partial_fit(X, fb, classes=classes)
    U = np.random.default_rng(2).random((300, 2))
    tr = ref.squarecb(X, y, U, 3, **params)
    assert_array_equal(np.searchsorted(classes, fb.actions_), tr.played)
    assert_array_equal(fb.propensities_, tr.propensities)
    assert_array_equal(fb.rewards_, tr.rewards)
    for name in STATE:
        assert_array_equal(getattr(est, name), tr.state[name], err_msg=name)
    # ties did occur (the marginal differs from p_g(a) on some rounds)
    assert np.any(tr.played != tr.greedy)


def test_dense_and_csr_give_the_same_learner():
    X, y = make_stream(500, d=12, k=3, seed=1)
    a = SquareCB(random_state=0).partial_fit(X, y, classes=[0, 1, 2])
    b = SquareCB(random_state=0).partial_fit(sp.csr_matrix(X), y, classes=[0, 1, 2])
    for name in STATE:
        assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def test_csr_with_duplicate_entries_is_summed_first():
    """NAG's scales are per feature: a column stored twice counts as its sum (as
    in the dense matrix), and the caller's matrix is not modified."""
    X, y = make_stream(200, d=6, k=3, seed=2)
    rows, cols = np.nonzero(X)
    vals = X[rows, cols]
    # split every stored value into two halves stored separately
    Xdup = sp.csr_matrix(
        (
            np.concatenate([[v * 0.25, v * 0.75] for v in vals]),
            np.repeat(cols, 2),
            np.r_[0, np.cumsum(2 * np.bincount(rows, minlength=200))],
        ),
        shape=X.shape,
    )
    assert not Xdup.has_canonical_format
    before = Xdup.data.copy()
    a = SquareCB(random_state=0).partial_fit(Xdup, y, classes=[0, 1, 2])
    b = SquareCB(random_state=0).partial_fit(sp.csr_matrix(X), y, classes=[0, 1, 2])
    assert_array_equal(Xdup.data, before)
    for name in STATE:
        assert_allclose(getattr(a, name), getattr(b, name), rtol=1e-12, err_msg=name)


def test_fit_matches_reference():
    """fit: per pass a permutation then the uniforms; state over the passes."""
    X, y = make_stream(200, d=6, k=3, seed=4)
    est = SquareCB(random_state=3, max_iter=3).fit(X, y)
    rng = np.random.default_rng(3)
    state, t0 = None, 0
    for _ in range(3):
        rows = rng.permutation(200)
        U = rng.random((200, 2))
        tr = ref.squarecb(X[rows], y[rows], U, 3, t0=t0, state=state)
        state, t0 = tr.state, t0 + 200
    for name in STATE:
        assert_array_equal(getattr(est, name), state[name], err_msg=name)


# ------------------------------------------------------------------- IGW
def _igw_formula(s, g, gamma):
    """Foster & Rakhlin's IGW, written with rewards, on the predictions clipped
    to the reward range [0, 1] (one gamma per class, or one for all)."""
    k = len(s)
    c = np.clip(s, 0.0, 1.0)
    gamma = np.broadcast_to(gamma, (k,))
    p = np.array(
        [1.0 / k if c[g] == c[a] else 1.0 / (k + gamma[a] * (c[g] - c[a]))
         for a in range(k)]
    )  # fmt: skip
    p[g] = 0.0
    p[g] = 1.0 - p.sum()
    return p


@pytest.mark.parametrize("gamma", [0.0, 0.5, 10.0, 1e6])
@pytest.mark.parametrize("k", [2, 3, 10])
def test_igw_on_random_scores(gamma, k):
    rng = np.random.default_rng(k)
    for _ in range(20):
        s = rng.standard_normal(k)
        g = int(np.argmax(s))
        p = igw_distribution(s, g, gamma)
        assert_allclose(p.sum(), 1.0, rtol=0, atol=1e-14)
        assert p[g] >= 1.0 / k - 1e-15
        assert np.all(p > 0)
        assert_allclose(p, _igw_formula(s, g, gamma), rtol=1e-13)
        # larger gap, smaller probability
        others = [a for a in range(k) if a != g]
        order = np.argsort(s[others])
        assert np.all(np.diff(p[others][order]) >= 0)


def test_igw_on_tied_scores_and_all_equal():
    s = np.array([0.3, 0.7, 0.7, -1.0])
    p = igw_distribution(s, 1, 4.0)
    assert p[2] == 1.0 / 4  # tied with the greedy class: gap 0
    assert_allclose(p[3], 1.0 / (4 + 4.0 * 0.7))  # -1 clipped to 0
    assert_allclose(p, _igw_formula(s, 1, 4.0), rtol=1e-14)
    for gamma in (0.0, 1.0, 1e8):
        for g in range(5):
            assert_allclose(igw_distribution(np.full(5, 0.2), g, gamma), 0.2)


def test_igw_with_gamma_zero_is_uniform():
    s = np.array([1.0, 0.0, -3.0])
    assert_allclose(igw_distribution(s, 0, 0.0), 1 / 3)


def test_exploration_distribution_is_igw_at_the_next_round():
    """gamma_t = scale t^exponent at t = t_ + 1 (a round-dependent
    schedule), over the predicted rewards W x + b."""
    X, y = make_stream(300, d=8, k=4, seed=6)
    est = SquareCB(exploration=InverseGap(2.0, exponent=0.7), random_state=0)
    est.partial_fit(X, y, classes=range(4))
    P = est.exploration_distribution(X[:20])
    S = X[:20] @ est.coef_.T + est.intercept_
    assert_allclose(est.decision_function(X[:20]), S, rtol=1e-12)
    # gamma_a = min(f(t), f(k (n_a + 1))), f(tau) = 2 tau^0.7
    gamma = np.minimum(
        2.0 * (est.t_ + 1) ** 0.7, 2.0 * (4 * (est.n_updates_ + 1)) ** 0.7
    )
    for s, p in zip(S, P, strict=True):
        assert_allclose(p, _igw_formula(s, int(np.argmax(s)), gamma), rtol=1e-10)
    # the schedule moves with the round index: the compiled distribution at
    # rounds 1 and 100 of the same scores follows gamma_t (below every class's
    # own clock k (n_a + 1) here)
    kernel = est._make_kernel()
    assert 4 * (est.n_updates_.min() + 1) > 100
    s = np.array([0.5, 0.1, -0.2, 0.3])
    for t in (1, 100):
        assert_allclose(
            kernel.py_distribution(s, t, 0),
            _igw_formula(s, 0, 2.0 * t**0.7),
            rtol=1e-13,
        )


def test_gamma_exponent_zero_is_a_fixed_gamma():
    X, y = make_stream(50, d=5, k=3, seed=0)
    est = SquareCB(exploration=InverseGap(3.0, exponent=0.0), random_state=0)
    est.partial_fit(X, y, classes=range(3))
    s = est.decision_function(X[:1])[0]
    assert_allclose(
        est.exploration_distribution(X[:1])[0],
        _igw_formula(s, int(np.argmax(s)), 3.0),
        rtol=1e-12,
    )


# ------------------------------------------------------------------- NAG
def test_each_regressor_is_nag_on_its_own_sub_stream():
    """Per-class scales: N and n are per regressor, and the weights of class a are
    exactly algorithm NAG run on the rounds where a was played, with their
    rewards."""
    X, y = make_stream(400, d=7, k=3, seed=8)
    X[:, 0] *= 1e3
    fb = BanditFeedback(y)
    est = SquareCB(shared_scale=False, step_size=Normalized(0.25), random_state=1)
    est.partial_fit(X, fb, classes=range(3))
    for a in range(3):
        mask = fb.actions_ == a
        st = ref.nag_regression(X[mask], fb.rewards_[mask], eta=0.25)
        assert est.n_updates_[a] == mask.sum()
        assert_array_equal(est.coef_[a], st["coef_"][0])
        assert_array_equal(est.intercept_[a], st["intercept_"][0])
        assert_array_equal(est.scale_[a], st["scale_"][0])
        assert_array_equal(est.norm_sum_[a], st["norm_sum_"][0])
        # the scale is the largest |x_i| seen by that regressor
        assert_array_equal(
            est.scale_[a], np.abs(X[mask]).max(axis=0) if mask.any() else 0.0
        )


def test_shared_scale_is_the_largest_value_seen_by_any_regressor():
    """With shared scales (the default) every row of ``scale_`` is the largest
    |x_i| over all the rows learned so far, whichever class was played; with
    per-class scales, only over the rows where that class was played."""
    X, y = make_stream(300, d=7, k=3, seed=8, n_empty=10)
    X[:, 0] *= 1e3
    X[:, 3] *= 1e-2
    for shared in (True, False):
        fb = BanditFeedback(y)
        est = SquareCB(shared_scale=shared, random_state=1)
        est.partial_fit(X, fb, classes=range(3))
        # shared: one stored row for every regressor; per class: one row each
        assert est.scale_.shape == ((1, 7) if shared else (3, 7))
        for a in range(3):
            rows = X if shared else X[fb.actions_ == a]
            scale = est.scale_[0] if shared else est.scale_[a]
            assert_array_equal(scale, np.abs(rows).max(axis=0))
        # the classes were played on different rows: the per-class maxima differ
        assert shared or np.any(est.scale_[0] != est.scale_[1])


def test_shared_scale_switched_on_mid_stream_matches_reference():
    """Per-class scales for 150 rounds (the rows of ``scale_`` differ), then
    ``shared_scale=True``: each regressor's weight is rescaled by its own scale
    when a row's value exceeds it, as the reference does, and the rows of
    ``scale_`` only grow (towards the shared maximum)."""
    X, y = make_stream(400, d=10, k=4, seed=3)
    X[:, 2] *= 50.0
    X[:, 5] *= 0.02
    classes = label_values(4)
    est = SquareCB(shared_scale=False, random_state=7)
    rng = np.random.default_rng(7)
    est.partial_fit(X[:150], classes[y[:150]], classes=classes)
    tr = ref.squarecb(X[:150], y[:150], rng.random((150, 2)), 4, shared_scale=False)
    assert np.any(est.scale_ != est.scale_[0])
    before = est.scale_.copy()
    est.set_params(shared_scale=True)
    est.partial_fit(X[150:], classes[y[150:]])
    tr = ref.squarecb(X[150:], y[150:], rng.random((250, 2)), 4, t0=150, state=tr.state)
    for name in STATE:
        assert_array_equal(getattr(est, name), tr.state[name], err_msg=name)
    assert np.all(est.scale_ >= before)


def test_shared_scale_switched_off_mid_stream_matches_reference():
    """Shared scales (one stored row) for 150 rounds, then
    ``shared_scale=False``: before the next update every regressor starts from
    the shared row (``scale_`` becomes ``k`` copies of it), then each grows by
    its own rows, as the reference does (caught: the one row kept and used by
    every regressor, or per-class rows started from zero)."""
    X, y = make_stream(400, d=10, k=4, seed=5)
    X[:, 2] *= 50.0
    X[:, 5] *= 0.02
    classes = label_values(4)
    est = SquareCB(random_state=7)
    rng = np.random.default_rng(7)
    est.partial_fit(X[:150], classes[y[:150]], classes=classes)
    tr = ref.squarecb(X[:150], y[:150], rng.random((150, 2)), 4)
    assert est.scale_.shape == (1, 10)
    shared = est.scale_[0].copy()
    est.set_params(shared_scale=False)
    est.partial_fit(X[150:], classes[y[150:]])
    tr = ref.squarecb(
        X[150:], y[150:], rng.random((250, 2)), 4, t0=150, state=tr.state,
        shared_scale=False,
    )  # fmt: skip
    for name in STATE:
        assert_array_equal(getattr(est, name), tr.state[name], err_msg=name)
    assert est.scale_.shape == (4, 10) and np.all(est.scale_ >= shared)
    assert np.any(est.scale_ != est.scale_[0])


def test_one_stored_row_of_shared_scales_is_k_equal_rows_bit_for_bit():
    """The compiled oracle with the shared scales stored once gives, update
    for update, the state it gives with ``k`` equal rows (the layout before
    the scales were stored once; caught: a weight rescaled by a scale already
    overwritten, a rescale skipped for one regressor)."""
    from skbandit._core._oracle import STEP_KINDS, RegressionOracle

    k, d = 5, 12
    states = []
    for rows in (1, k):
        st = ref.fresh_state(k, d, scale_rows=rows)
        st["intercept_"][:] = 1.0
        oracle = RegressionOracle(
            st["coef_"].T, st["intercept_"], st["scale_"].T, st["grad_sq_"],
            st["intercept_grad_sq_"], st["norm_sum_"], st["n_updates_"],
            (STEP_KINDS["normalized"], 0.5, False), True, 1.0, True,
        )  # fmt: skip
        draw = np.random.default_rng(1)
        for _ in range(300):
            x = draw.standard_normal(d) * 10.0 ** draw.integers(-2, 3, size=d)
            x[draw.random(d) < 0.5] = 0.0
            a = int(draw.integers(k))
            oracle.py_update(x, None, a, 0.0, float(draw.random() < 0.5), 1.0)
        states.append(st)
    one, many = states
    assert np.all(many["scale_"] == many["scale_"][0])
    assert_array_equal(one["scale_"][0], many["scale_"][0])
    for name in ("coef_", "intercept_", "grad_sq_", "norm_sum_", "n_updates_"):
        assert_array_equal(one[name], many[name], err_msg=name)


def test_shared_scale_rescales_every_regressor_by_hand():
    """One feature, no intercept, eta = 0.25, logged rounds. Round 1: class 0,
    x = 0.5, r = 1: s = 0.5, w_0 = 0 - 0.25 (-0.5) / (0.5 * 0.5) = 0.5 (as in
    the per-class test below). Round 2: class 1, x = 2, r = 0: the prediction
    0 equals the reward (no step for w_1), but the shared scale grows to 2, so
    NAG's rescaling w_i *= s_i / |x_i| applies to every regressor: w_0 = 0.5 *
    0.5 / 2 = 0.125, and both rows of ``scale_`` are 2. Per-class scales leave
    w_0 = 0.5 and class 0's scale at 0.5."""
    for shared, w0, s0 in ((True, 0.125, 2.0), (False, 0.5, 0.5)):
        est = SquareCB(
            step_size=Normalized(0.25),
            fit_intercept=False,
            shared_scale=shared,
            random_state=0,
        )
        est.partial_fit(
            np.array([[0.5]]), LoggedFeedback([0], [1.0], [0.5]), classes=[0, 1]
        )
        assert est.coef_[0, 0] == 0.5
        est.partial_fit(np.array([[2.0]]), LoggedFeedback([1], [0.0], [0.5]))
        assert est.coef_[0, 0] == w0 and est.coef_[1, 0] == 0.0
        # shared: the one stored scale is 2; per class: class 0's stays 0.5
        assert est.scale_[0, 0] == s0 and est.scale_[-1, 0] == 2.0
        assert est.scale_.shape == ((1, 1) if shared else (2, 1))
        assert est.norm_sum_[1] == 1.0 and est.n_updates_.tolist() == [1, 1]


def test_nag_first_update_by_hand():
    """One update from the zero state, by hand from the algorithm: s = |x|,
    N = sum (x_i / s_i)^2 + 1 = nnz + 1, G_i = (e x_i)^2, and every coordinate
    moves by eta sqrt(1 / N) sign(-e x_i) / |x_i| (the intercept by the same
    with x = 1)."""
    x = np.array([[0.0, 2.0, -0.5, 0.0]])
    est = SquareCB(step_size=Normalized(0.25), initial_reward=0.0, random_state=0)
    fb = BanditFeedback(np.array([1]))
    est.partial_fit(x, fb, classes=[0, 1, 2])
    a, r = int(fb.actions_[0]), float(fb.rewards_[0])
    e = 0.0 - r  # the prediction was 0
    N = 3.0
    rate = 0.25 * math.sqrt(1 / N)
    assert est.norm_sum_[a] == N and est.n_updates_[a] == 1
    assert est.scale_.shape == (1, 4)  # shared scales (the default): one row
    assert_array_equal(est.scale_[0], [0.0, 2.0, 0.5, 0.0])
    if e == 0.0:  # played wrong: reward 0 = prediction, nothing to learn
        assert not est.coef_.any() and not est.intercept_.any()
        return
    assert_allclose(est.coef_[a], [0.0, rate / 2.0, -rate / 0.5, 0.0], rtol=1e-15)
    assert_allclose(est.intercept_[a], rate, rtol=1e-15)


def test_nag_rescale_when_a_feature_scale_grows():
    """NAG's steps on w_i go as 1 / s_i, so when |x_i| exceeds s_i the weight is
    multiplied by s_i / |x_i| (what its past steps would have been at the new
    scale), not by (s_i / |x_i|)^2 (the non-adaptive NG's factor). By hand, one
    feature, no intercept, no cap, eta = 0.25, the logged action 0 each round:
    round 1, x = 0.5, r = 1: s = 0.5, N = n = 1, e = -1, G = 0.25,
    w = 0 - 0.25 (-0.5) / (0.5 * 0.5) = 0.5; round 2, x = 2: w = 0.5 * 0.5 / 2
    = 0.125, so the prediction is 0.25, the reward given, and no step follows
    (the squared factor would leave w = 0.03125 and then take a step)."""
    est = SquareCB(step_size=Normalized(0.25), fit_intercept=False, random_state=0)
    est.partial_fit(
        np.array([[0.5]]),
        LoggedFeedback([0], [1.0], [0.5]),
        classes=[0, 1],
    )
    assert est.coef_[0, 0] == 0.5 and est.scale_[0, 0] == 0.5
    est.partial_fit(np.array([[2.0]]), LoggedFeedback([0], [0.25], [0.5]))
    assert est.coef_[0, 0] == 0.125
    assert est.scale_[0, 0] == 2.0 and est.grad_sq_[0, 0] == 0.25
    assert est.norm_sum_[0] == 2.0 and est.n_updates_[0] == 2


def test_zero_rows_without_intercept_are_safe():
    """N = 0 (all-zero rows, no intercept) and G_i = 0: no division by zero."""
    X = np.zeros((20, 4))
    X[10:, 1] = 1.0
    y = np.arange(20) % 3
    for container in (X, sp.csr_matrix(X)):
        est = SquareCB(fit_intercept=False, random_state=0)
        est.partial_fit(container, y, classes=range(3))
        for name in STATE:
            assert np.all(np.isfinite(getattr(est, name))), name
        assert not est.intercept_.any()
        assert est.n_updates_.sum() == 20


def _scaled_run(regressor, factors, n=5000, seed=0, **extra):
    X, y = make_stream(n, d=10, k=4, seed=11, n_empty=50)
    X = X * factors
    params = _params(regressor, **extra)
    fb = BanditFeedback(y)
    est = SquareCB(random_state=seed, **params).partial_fit(X, fb, classes=range(4))
    return est, fb, X


def test_normalized_oracle_is_scale_invariant_and_sgd_is_not():
    """Multiplying feature columns by 1e-3 or 1e3 leaves the played actions of
    the normalized oracle unchanged over 5,000 rounds (scores allclose after
    rescaling the weights back); the "sgd" oracle plays differently, which shows
    the test has teeth."""
    factors = np.ones(10)
    factors[[1, 4, 7]] = 1e-3
    factors[[2, 8]] = 1e3
    base, fb0, X0 = _scaled_run("normalized", np.ones(10))
    scaled, fb1, X1 = _scaled_run("normalized", factors)
    assert_array_equal(fb0.actions_, fb1.actions_)
    assert_allclose(scaled.coef_ * factors, base.coef_, rtol=1e-9, atol=1e-12)
    assert_allclose(scaled.intercept_, base.intercept_, rtol=1e-9)
    assert_allclose(
        scaled.decision_function(X1), base.decision_function(X0), rtol=1e-9, atol=1e-12
    )
    assert_allclose(scaled.scale_ / factors, base.scale_, rtol=1e-12)
    _, g0, _ = _scaled_run("sgd", np.ones(10))
    shrink = np.where(factors < 1, factors, 1.0)
    _, g1, _ = _scaled_run("sgd", shrink)
    assert np.mean(g0.actions_ != g1.actions_) > 0.05


def test_adagrad_is_not_scale_invariant_either():
    factors = np.ones(10)
    factors[[1, 4]] = 1e3
    _, g0, _ = _scaled_run("adagrad", np.ones(10))
    _, g1, _ = _scaled_run("adagrad", factors)
    assert np.mean(g0.actions_ != g1.actions_) > 0.05


def test_learns_a_simple_stream():
    """Far better than chance on a noisy linear stream (k = 4: chance 0.75)."""
    X, y = make_stream(5000, d=10, k=4, seed=11)
    est = SquareCB(random_state=0).partial_fit(X, y, classes=range(4))
    assert est.n_mistakes_ / est.t_ < 0.4
    assert est.score(X[-1000:], y[-1000:]) > 0.7


def test_learn_reads_only_its_arguments():
    """The kernel learns from an action chosen elsewhere: ``py_learn`` with a
    logged action and a real-valued reward updates that regressor only, as the
    reference's update does."""
    X, y = make_stream(50, d=5, k=3, seed=0)
    est = SquareCB(random_state=0).partial_fit(X, y, classes=range(3))
    before = copy.deepcopy(est)
    kernel = est._make_kernel()
    x = np.ascontiguousarray(X[7])
    kernel.py_act(x, est.t_ + 1, 0.3, 0.1)
    kernel.py_learn(x, est.t_ + 1, 2, 0, 0.5, 0.37)
    st = {name: getattr(before, name).copy() for name in STATE}
    RegressionOracle(
        st,
        regressor="normalized",
        learning_rate=est.step_size_.learning_rate,
        fit_intercept=True,
        step_cap=est.step_cap,
        shared_scale=est.shared_scale,
    ).update(
        2,
        list(enumerate(x.tolist())),
        float(before.decision_function(X[7:8])[0, 2]),
        0.37,
        1.0,
    )
    for name in STATE:
        assert_array_equal(getattr(est, name), st[name], err_msg=name)
    assert_array_equal(est.coef_[:2], before.coef_[:2])


@pytest.mark.parametrize("regressor", list(REGRESSORS))
@pytest.mark.parametrize("cap", [0.25, 0.5, 1.0])
def test_step_cap_bounds_the_move_of_the_prediction(regressor, cap):
    """With ``step_cap=c <= 1`` the update moves the played regressor's prediction
    on the row towards the reward by at most ``c |pred - r|``: it never
    overshoots the reward, whatever the learning rate, and at a large rate the
    cap binds (the move is exactly ``c |pred - r|``)."""
    X, y = make_stream(200, d=6, k=3, seed=9)
    X = X + 0.5  # no zero entries: every coordinate moves
    binds = 0
    est = SquareCB(
        step_size=STEP_RULES[regressor](1000.0), step_cap=cap, random_state=0
    )
    est.partial_fit(X[:20], y[:20], classes=range(3))
    for t in range(20, 60):
        x = X[t : t + 1]
        fb = BanditFeedback(y[t : t + 1])
        # the prediction the update starts from (NAG: after its rescaling)
        before = copy.deepcopy(est)
        est.partial_fit(x, fb)
        a, r = int(fb.actions_[0]), float(fb.rewards_[0])
        after = est.decision_function(x)[0, a]
        if regressor == "normalized":
            s_old = before.scale_[0]  # shared scales (the default): one row
            grow = (np.abs(x[0]) > s_old) & (s_old > 0)
            w = before.coef_[a].copy()
            w[grow] *= s_old[grow] / np.abs(x[0][grow])
            pred = float(x[0] @ w + before.intercept_[a])
        else:
            pred = float(before.decision_function(x)[0, a])
        tol = 1e-9 * (1 + abs(pred))
        # the furthest the capped step may go: pred + cap (r - pred)
        far = pred + cap * (r - pred)
        lo, hi = min(pred, far), max(pred, far)
        assert lo - tol <= after <= hi + tol, (t, pred, r, after)
        binds += abs(after - far) <= tol
    assert binds > 10


@pytest.mark.parametrize("cap", [1.5, 8.0, None])
def test_step_cap_above_one_is_refused(cap):
    """A cap above 1 (or none) would let a step overshoot the reward."""
    X, y = make_stream(20, d=3, k=3, seed=0)
    with pytest.raises(ValueError, match="step_cap"):
        SquareCB(step_cap=cap).partial_fit(X, y, classes=range(3))


@pytest.mark.parametrize("container", ["dense", "csr"])
def test_distribution_stays_a_probability_vector_when_gamma_overflows(container):
    """gamma_t = 100 t^400 overflows to infinity from round 6: on all-zero rows
    without intercept every prediction is 0, every class ties with the greedy
    one (gap 0), and the tie gets 1/k, not 1 / (k + inf * 0) = NaN. The logged
    propensities, the next round's distribution and the state stay finite."""
    X = np.zeros((30, 4))
    X = sp.csr_matrix(X) if container == "csr" else X
    y = np.arange(30) % 3
    fb = BanditFeedback(y)
    est = SquareCB(
        exploration=InverseGap(exponent=400), fit_intercept=False, random_state=0
    )
    est.partial_fit(X, fb, classes=range(3))
    with np.errstate(over="ignore"):  # the point: gamma_t overflows to inf
        assert math.isinf(100.0 * np.power(30.0, 400.0))
    assert_allclose(fb.propensities_, 1 / 3, rtol=1e-15)
    assert_allclose(est.exploration_distribution(X[:2]), 1 / 3, rtol=1e-15)
    # an infinite gamma with a positive gap gives that class probability 0
    p = igw_distribution(np.array([0.9, 0.2, 0.9]), 0, math.inf)
    assert p[1] == 0.0
    assert_allclose(p, [2 / 3, 0.0, 1 / 3], rtol=1e-15)


def test_igw_uses_predictions_clipped_to_the_reward_range():
    """Rewards are in [0, 1]: a prediction below 0 (or above 1) is no more
    informative than 0 (or 1), so the gap is taken on clipped predictions: a
    class predicted at -50 gets the probability of one predicted at 0."""
    p = igw_distribution(np.array([1.6, -50.0, 0.0, 0.5]), 0, 10.0)
    assert_allclose(p[1], 1.0 / (4 + 10.0 * 1.0), rtol=1e-15)
    assert p[1] == p[2]
    assert_allclose(p[3], 1.0 / (4 + 10.0 * 0.5), rtol=1e-15)


def test_a_class_with_few_updates_keeps_early_exploration():
    """gamma_a = min(f(t), f(k (n_a + 1))): a class whose regressor has been
    updated n_a times is explored as at round k (n_a + 1), however late the
    round. A learner whose class 2 was never played after 3,000 rounds gives it
    the probability of round k = 3, not of round 3,001 (f the default
    ``300 tau^0.75``)."""
    X, y = make_stream(3000, d=5, k=3, seed=1)
    fb = LoggedFeedback(np.arange(3000) % 2, (y == np.arange(3000) % 2) * 1.0,
                        np.full(3000, 0.5))  # fmt: skip
    est = SquareCB(random_state=0).partial_fit(X, fb, classes=range(3))
    assert est.n_updates_[2] == 0
    s = np.array([0.9, 0.2, 0.1])
    p = est._make_kernel().py_distribution(s, est.t_ + 1, 0)
    f = lambda tau: 300.0 * tau**0.75  # noqa: E731 (the default schedule)
    gamma = [f(3001), f(3001), f(3)]
    assert_allclose(p, _igw_formula(s, 0, gamma), rtol=1e-14)
    assert p[2] > 100 * p[1]


def test_bench_squarecb_smoke_run():
    out = run_benchmark(
        "bench_squarecb.py", "--n-rounds", "1500", "--repeat", "1",
        "--inputs", "csr", "--numpy-rounds", "200", "--vw-rounds", "200",
    )  # fmt: skip
    assert_benchmark_rows(
        out, ("Banditron", "SquareCB", "SquareCB adagrad", "SquareCB sgd")
    )


def test_regressors_start_at_initial_reward():
    """The intercepts start at ``initial_reward`` (the regressors' first
    prediction): a logged reward equal to it on an all-zero row is no error and
    leaves every intercept there; without an intercept the start is 0."""
    X = np.zeros((1, 3))
    est = SquareCB(initial_reward=0.7, random_state=0)
    est.partial_fit(X, LoggedFeedback([1], [0.7], [0.5]), classes=range(3))
    assert_array_equal(est.intercept_, [0.7, 0.7, 0.7])
    assert_array_equal(est.decision_function(np.ones((1, 3))), [[0.7, 0.7, 0.7]])
    est = SquareCB(initial_reward=0.7, fit_intercept=False, random_state=0)
    est.partial_fit(X, LoggedFeedback([1], [0.7], [0.5]), classes=range(3))
    assert not est.intercept_.any()


def test_failed_call_after_switching_scales_off_keeps_the_shared_row():
    """The copy of the shared row to every regressor belongs to a learning
    call: ``sample_actions`` and ``predict`` leave ``scale_`` as it is, a call
    that fails leaves it as it was (one row, same values), and the next good
    call plays as if the failed one never happened (caught: the copy made when
    the kernel is built, which acting also does)."""
    X, y = make_stream(200, d=6, k=3, seed=2)
    est = SquareCB(random_state=0).partial_fit(X[:100], y[:100], classes=range(3))
    twin = copy.deepcopy(est)
    before = est.scale_
    est.set_params(shared_scale=False)
    twin.set_params(shared_scale=False)
    est.sample_actions(X[100:110])
    est.predict(X[100:110])
    twin.sample_actions(X[100:110])
    assert est.scale_ is before

    def fail(kernel):
        raise RuntimeError("planted failure after the block")

    est._after_block = fail
    with pytest.raises(RuntimeError, match="planted"):
        est.partial_fit(X[100:], y[100:])
    del est._after_block
    assert est.scale_ is before and est.scale_.shape == (1, 6)
    est.partial_fit(X[100:], y[100:])
    twin.partial_fit(X[100:], y[100:])
    for name in STATE:
        assert_array_equal(getattr(est, name), getattr(twin, name), err_msg=name)


@pytest.mark.parametrize("regressor", list(REGRESSORS))
@pytest.mark.parametrize("shared_scale", [True, False])
def test_prefetching_rounds_match_reference(regressor, shared_scale, monkeypatch):
    """A model beyond ``PREFETCH_MIN_BYTES`` ends each ``act`` on a sparse row
    by prefetching the lines its played regressor's update will touch (``G``
    and the scales on the row's columns): a hint, so the simulator's rounds
    are the reference's and the live loop's (``sample_actions`` then
    ``partial_fit(row, LoggedFeedback(...))``, the calls that prefetch for the
    next one) are the same rounds, bit for bit. The threshold is lowered to 0
    so that this small stream takes that path (caught: the prefetching ``act``
    returning the greedy label instead of the draw; the prefetch of the
    played regressor's row writing to it)."""
    from skbandit._core import _kernel

    monkeypatch.setattr(_kernel, "PREFETCH_MIN_BYTES", 0)
    X, y = make_stream(300, d=12, k=4, seed=11)
    X[:, 3] *= 40.0  # the scales grow on some rounds
    X = sp.csr_matrix(X)
    params = _params(regressor, shared_scale=shared_scale)
    classes = label_values(4)
    est = SquareCB(random_state=4, **params)
    fb = BanditFeedback(classes[y])
    est.partial_fit(X, fb, classes=classes)
    assert est._make_kernel().prefetch
    tr = ref.squarecb(X, y, np.random.default_rng(4).random((300, 2)), 4, **params)
    assert_array_equal(np.searchsorted(classes, fb.actions_), tr.played)
    assert_array_equal(fb.propensities_, tr.propensities)
    for name in STATE:
        assert_array_equal(getattr(est, name), tr.state[name], err_msg=name)
    live = SquareCB(random_state=4, **params)
    for i in range(X.shape[0]):
        row = X[i : i + 1]
        action, p = live.sample_actions(row, classes=classes if i == 0 else None)
        reward = (action == classes[y[i]]).astype(float)
        live.partial_fit(row, LoggedFeedback(action, reward, p))
    assert live._make_kernel().prefetch
    for name in STATE:
        assert_array_equal(getattr(live, name), tr.state[name], err_msg=name)


def test_prefetch_threshold_is_the_size_of_the_weights(monkeypatch):
    """The prefetching ``act`` is taken exactly when ``W`` (``8 k d`` bytes) is
    larger than ``PREFETCH_MIN_BYTES``: never on the small models of the
    other tests at the default threshold (caught: ``>=`` for ``>``, which
    prefetches a model of exactly the threshold's size)."""
    from skbandit._core import _kernel

    X, y = make_stream(20, d=10, k=4, seed=0)
    est = SquareCB(random_state=0).partial_fit(X, y, classes=range(4))
    assert not est._make_kernel().prefetch
    for threshold, expected in ((8 * 4 * 10 - 1, True), (8 * 4 * 10, False)):
        monkeypatch.setattr(_kernel, "PREFETCH_MIN_BYTES", threshold)
        assert est._make_kernel().prefetch is expected
