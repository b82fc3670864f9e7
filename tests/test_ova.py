"""One-vs-all learners: NumPy references, the papers' properties, USPS.

- ``ConservativeOneVsAll`` (Chen et al. 2009): identical actions and state to the
  NumPy reference for PA, PA-I and PA-II, dense and CSR; loss-based decoding is the
  argmax; on USPS, PA-I beats the Banditron.
"""

from __future__ import annotations

import _reference_ova as ref_ova
import numpy as np
import pytest
import scipy.sparse as sp
from _data import label_values, make_stream
from numpy.testing import assert_allclose, assert_array_equal

from skbandit import BanditFeedback, Banditron, ConservativeOneVsAll, SeparableOneVsAll
from skbandit.datasets import make_separable_stream
from skbandit.exploration import EpsilonGreedy, InverseGap, Softmax

UPDATES = ["pa", "pa1", "pa2"]


def _as(X, container):
    return sp.csr_matrix(X) if container == "csr" else X


def _check(est, fb, trace, labels, y_codes, before=(0, 0)):
    """``est`` (and its log ``fb``) played ``trace``; ``before``: its mistake
    counters before the call."""
    assert_array_equal(fb.actions_, labels[trace.played])
    assert_array_equal(fb.rewards_, trace.rewards)
    assert_array_equal(fb.propensities_, trace.propensities)
    assert est.n_mistakes_ - before[0] == int(np.sum(trace.played != y_codes))
    assert est.n_greedy_mistakes_ - before[1] == int(np.sum(trace.greedy != y_codes))
    state = est._get_state()
    for name, value in trace.state.items():
        assert_array_equal(state[name], value, err_msg=name)


# --------------------------------------------------------------------------------------
# ConservativeOneVsAll against its reference


@pytest.mark.parametrize("container", ["dense", "csr"])
@pytest.mark.parametrize("kind", ["gaussian", "binary"])
@pytest.mark.parametrize("k", [2, 3, 7])
@pytest.mark.parametrize("update, C", [("pa", 1.0), ("pa1", 0.1), ("pa2", 0.5)])
def test_conservative_ova_matches_reference(update, C, k, kind, container):
    seed = 5 * k + len(kind)
    X, y = make_stream(n=300, d=15, k=k, kind=kind, seed=seed)
    labels = label_values(k, seed)
    est = ConservativeOneVsAll(update=update, C=C, random_state=seed)
    rng = np.random.default_rng(seed)
    W = None
    # two partial_fit calls: the second continues the state and the generator
    for part in (slice(0, 170), slice(170, 300)):
        fb = BanditFeedback(labels[y[part]])
        before = (getattr(est, "n_mistakes_", 0), getattr(est, "n_greedy_mistakes_", 0))
        est.partial_fit(_as(X[part], container), fb, classes=labels)
        U = rng.random((part.stop - part.start, 2))
        trace = ref_ova.conservative_ova(
            _as(X[part], container), y[part], U, k, update=update, C=C, W0=W
        )
        W = trace.state["coef_"]
        _check(est, fb, trace, labels, y[part], before)
    assert est.t_ == 300


@pytest.mark.parametrize("container", ["dense", "csr"])
@pytest.mark.parametrize(
    "rule",
    [
        EpsilonGreedy(0.2, decay=0.5, min_epsilon=0.02),  # the round index matters
        Softmax(0.05, scale=2.0),
        InverseGap(2.0, exponent=0.5, clip=False),
    ],
    ids=["epsilon-greedy-decay", "softmax", "inverse-gap"],
)
@pytest.mark.parametrize("cls", ["ConservativeOneVsAll", "SeparableOneVsAll"])
def test_ova_learners_play_other_rules_as_their_references(cls, rule, container):
    """Another exploration rule, played by the one-vs-all learners: the same
    actions, propensities and state as their references fed the rule's NumPy
    twin, over two calls (the second continues the global round index)."""
    k, seed = 4, 11
    X, y = make_stream(n=300, d=12, k=k, seed=seed)
    est = (
        ConservativeOneVsAll(update="pa1", C=0.5, exploration=rule, random_state=seed)
        if cls == "ConservativeOneVsAll"
        else SeparableOneVsAll(exploration=rule, random_state=seed)
    )
    rng = np.random.default_rng(seed)
    W = None
    for part in (slice(0, 140), slice(140, 300)):
        fb = BanditFeedback(y[part])
        before = (getattr(est, "n_mistakes_", 0), getattr(est, "n_greedy_mistakes_", 0))
        est.partial_fit(_as(X[part], container), fb, classes=np.arange(k))
        U = rng.random((part.stop - part.start, 2))
        if cls == "ConservativeOneVsAll":
            trace = ref_ova.conservative_ova(
                _as(X[part], container), y[part], U, k, update="pa1", C=0.5,
                W0=W, exploration=rule, t0=part.start,
            )  # fmt: skip
        else:
            trace = ref_ova.separable_ova(
                _as(X[part], container), y[part], U, k, W0=W, exploration=rule,
                t0=part.start,
            )  # fmt: skip
        W = trace.state["coef_"]
        _check(est, fb, trace, np.arange(k), y[part], before)
    assert est.exploration_.get_params() == rule.get_params()


@pytest.mark.parametrize("update", UPDATES)
def test_conservative_ova_fit_matches_reference(update):
    k, seed = 4, 3
    X, y = make_stream(n=120, d=10, k=k, seed=seed)
    est = ConservativeOneVsAll(update=update, random_state=seed, max_iter=3)
    est.fit(sp.csr_matrix(X), y)
    rng = np.random.default_rng(seed)
    W = None
    for _ in range(3):
        rows = rng.permutation(len(y))
        U = rng.random((len(y), 2))
        W = ref_ova.conservative_ova(
            X[rows], y[rows], U, k, update=update, C=1.0, W0=W
        ).state["coef_"]
    assert_array_equal(est.coef_, W)


def test_wrong_round_changes_only_the_played_learner():
    """Conservative: after a mistake only the played class's row moves, and it
    moves towards -1 (its score of x decreases)."""
    X, y = make_stream(n=200, d=8, k=5, n_empty=0, seed=2)
    est = ConservativeOneVsAll(update="pa1", random_state=0)
    est.partial_fit(X[:100], y[:100], classes=np.arange(5))
    checked = 0
    for t in range(100, 200):
        before = est.coef_.copy()
        fb = BanditFeedback(y[t : t + 1])
        est.partial_fit(X[t : t + 1], fb)
        a = int(fb.actions_[0])
        changed = np.flatnonzero(np.any(est.coef_ != before, axis=1))
        if fb.rewards_[0] == 0:
            assert set(changed) <= {a}
            assert est.coef_[a] @ X[t] <= before[a] @ X[t]
            checked += 1
    assert checked > 10


def test_pa_step_reaches_the_margin():
    """PA (no cap) makes the updated learner's loss on x exactly zero: after a
    wrong round, w_a . x = -1 (up to rounding)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 6))
    est = ConservativeOneVsAll(update="pa", random_state=0)
    est.partial_fit(x, [1], classes=[0, 1, 2])
    fb = BanditFeedback([1])
    est.partial_fit(x * 0.5, fb)
    a = int(fb.actions_[0])
    if fb.rewards_[0] == 0:
        assert est.coef_[a] @ (x[0] * 0.5) == pytest.approx(-1.0)
    else:
        assert est.coef_[a] @ (x[0] * 0.5) >= 1.0 - 1e-12


# --------------------------------------------------------------------------------------
# loss-based decoding


def _loss_based_decoding(f: np.ndarray) -> np.ndarray:
    """argmin_r d_L(M(r), f) for the one-vs-all code matrix M (M(r)_s = +1 if s = r
    else -1) and the hinge loss L(z) = (1 - z)_+, as written in the paper:
    d_L(M(r), f) = sum_s L(M(r)_s f_s). All minimisers, per row."""
    k = f.shape[1]
    M = 2.0 * np.eye(k) - 1.0
    d = np.maximum(0.0, 1.0 - M[None, :, :] * f[:, None, :]).sum(axis=2)
    return d == d.min(axis=1, keepdims=True)


def test_loss_based_decoding_is_the_argmax():
    rng = np.random.default_rng(0)
    k, d = 6, 5
    X = rng.standard_normal((400, d))
    for scale in (0.05, 1.0, 20.0):
        est = ConservativeOneVsAll(random_state=0).partial_fit(
            X[:2], [0, 1], classes=np.arange(k)
        )
        est.coef_[:] = scale * rng.standard_normal((k, d))
        f = est.decision_function(X)
        minimisers = _loss_based_decoding(f)
        assert minimisers.sum(axis=1).max() == 1  # no ties on random scores
        assert_array_equal(est.predict(X), np.argmax(minimisers, axis=1))
        # and the played action (partial_fit) is the decoded label
        snap = est.coef_.copy()
        for i in range(20):
            est.coef_[:] = snap
            fb = BanditFeedback([0])
            est.partial_fit(X[i : i + 1], fb)
            assert fb.actions_[0] == np.argmax(minimisers[i])


# --------------------------------------------------------------------------------------
# USPS (Chen et al. 2009, Table I: PA-I 17.70%, Banditron 50.28%)


def test_usps_pa1_beats_banditron(usps_stream):
    X, y = usps_stream
    classes = np.unique(y)
    err_pa, err_bt = [], []
    for seed in range(5):
        pa = ConservativeOneVsAll(update="pa1", random_state=seed)
        pa.partial_fit(X, y, classes=classes)
        err_pa.append(pa.n_mistakes_ / pa.t_)
        bt = Banditron(exploration=EpsilonGreedy(0.3), random_state=seed).partial_fit(
            X, y, classes=classes
        )
        err_bt.append(bt.n_mistakes_ / bt.t_)
    assert np.mean(err_pa) <= 0.30
    assert np.mean(err_pa) < np.mean(err_bt)


# --------------------------------------------------------------------------------------
# SeparableOneVsAll against its references


def _unit_ball(X, seed):
    """Rows scaled into the unit ball (some exactly on the sphere, some inside)."""
    rng = np.random.default_rng(seed)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    scale = np.where(norms > 0, 1.0 / np.maximum(norms, 1e-300), 0.0)
    return X * scale * np.where(rng.random((len(X), 1)) < 0.5, 1.0, rng.random())


SEPARABLE_CASES = [
    pytest.param({}, id="linear-paper"),
    pytest.param({"update_scope": "all"}, id="linear-full"),
    pytest.param({"kernel": "rational"}, id="rational-paper"),
    pytest.param({"kernel": "rational", "update_scope": "all"}, id="rational-full"),
    pytest.param({"kernel": "rational", "budget": 7}, id="rational-budget"),
    # budgets small enough that the store's rings wrap around many times
    pytest.param({"kernel": "rational", "budget": 1}, id="rational-budget-1"),
    pytest.param(
        {"kernel": "rational", "budget": 3, "update_scope": "all"},
        id="rational-budget-3",
    ),
    pytest.param(
        {"kernel": "rational", "large_norm": "project"}, id="rational-project"
    ),
]


def _separable_reference(params, X, y, U, k, state):
    scope = params.get("update_scope", "played")
    if params.get("kernel") is None:
        W0 = None if state is None else state["coef_"]
        return ref_ova.separable_ova(X, y, U, k, update_scope=scope, W0=W0)
    return ref_ova.separable_ova_rational(
        X,
        y,
        U,
        k,
        update_scope=scope,
        budget=params.get("budget"),
        project=params.get("large_norm") == "project",
        state0=state,
    )


@pytest.mark.parametrize("container", ["dense", "csr"])
@pytest.mark.parametrize("kind", ["gaussian", "binary"])
@pytest.mark.parametrize("k", [2, 3, 7])
@pytest.mark.parametrize("params", SEPARABLE_CASES)
def test_separable_ova_matches_reference(params, k, kind, container):
    seed = 7 * k + len(kind)
    X, y = make_stream(n=300, d=15, k=k, kind=kind, seed=seed)
    if params.get("kernel") and params.get("large_norm") != "project":
        X = _unit_ball(X, seed)
    labels = label_values(k, seed)
    est = SeparableOneVsAll(random_state=seed, **params)
    rng = np.random.default_rng(seed)
    state = None
    for part in (slice(0, 170), slice(170, 300)):
        fb = BanditFeedback(labels[y[part]])
        before = (getattr(est, "n_mistakes_", 0), getattr(est, "n_greedy_mistakes_", 0))
        est.partial_fit(_as(X[part], container), fb, classes=labels)
        U = rng.random((part.stop - part.start, 2))
        trace = _separable_reference(
            params, _as(X[part], container), y[part], U, k, state
        )
        state = trace.state
        _check(est, fb, trace, labels, y[part], before)
        assert set(est._state_attrs) == set(trace.state)
    # predictions use the same scores as training
    scores = est._score_rows(_as(X, container))
    P = est.exploration_distribution(_as(X, container))
    for i in range(0, 300, 37):
        cols, vals = ref_ova._row(_as(X, container), i)
        if params.get("kernel"):
            f = ref_ova.projection_factor(vals, params.get("large_norm") == "project")
            s = ref_ova.rational_kernel_scores(
                ref_ova.support_vectors(state, X.shape[1]),
                state["dual_coef_"],
                cols,
                vals,
                f,
            )
        else:
            s = ref_ova.scores(state["coef_"], cols, vals)
            assert_allclose(scores[i], s, rtol=1e-12, atol=1e-12)
            continue
        assert_array_equal(scores[i], s)
        G = ref_ova.maximisers(s)
        expected = sum(ref_ova._separable_p(s, int(g)) for g in G) / len(G)
        assert_allclose(P[i], expected, rtol=1e-15)
    if params.get("budget"):
        assert est.support_vectors_.shape[0] <= params["budget"]


def test_separable_ova_distribution_is_uniform_without_a_yes():
    est = SeparableOneVsAll(random_state=0).partial_fit(
        np.eye(3), [0, 1, 2], classes=[0, 1, 2]
    )
    est.coef_[:] = -np.eye(3) - 0.5
    P = est.exploration_distribution(np.array([[1.0, 0.0, 0.0], [0.0, -4.0, 0.0]]))
    assert_array_equal(P[0], np.full(3, 1 / 3))
    assert_array_equal(P[1], [0.0, 1.0, 0.0])  # f = (2, 6, 2): play the top YES


def test_rational_kernel_refuses_rows_outside_the_unit_ball():
    X, y = make_stream(n=50, d=5, k=3, n_empty=0, seed=1)
    est = SeparableOneVsAll(kernel="rational", random_state=0)
    with pytest.raises(ValueError, match=r"(?s)norm at most 1.*\[x, 1\] / sqrt\(2\)"):
        est.fit(X, y)
    assert not hasattr(est, "classes_")
    Xu = _unit_ball(X, 1)
    est.partial_fit(Xu, y, classes=[0, 1, 2])
    snap = est._get_state()
    with pytest.raises(ValueError, match="norm at most 1"):
        est.partial_fit(sp.csr_matrix(X), y)
    with pytest.raises(ValueError, match="norm at most 1"):
        est.predict(X)
    for name, value in snap.items():
        if isinstance(value, np.ndarray):
            assert_array_equal(getattr(est, name), value)
    # a row normalised to norm 1 with a rounding error is accepted
    row = np.full((1, 5), 1 / np.sqrt(5)) * (1 + 1e-15)
    est.partial_fit(row, [0])


def test_rational_kernel_has_no_coef_and_budget_keeps_the_newest():
    X, y = make_stream(n=400, d=6, k=4, seed=3)
    X = _unit_ball(X, 3)
    full = SeparableOneVsAll(kernel="rational", random_state=0)
    full.partial_fit(X, y, classes=np.arange(4))
    assert not hasattr(full, "coef_")
    assert full._state_attrs == ("_sv_data", "_sv_indices", "_sv_indptr", "dual_coef_")
    assert np.all(np.abs(full.dual_coef_).sum(axis=1) == 1)  # one owner ("paper")
    # at most one support vector per round
    assert 0 < full.support_vectors_.shape[0] <= full.t_
    small = SeparableOneVsAll(kernel="rational", budget=5, random_state=0)
    small.partial_fit(X, y, classes=np.arange(4))
    assert small.support_vectors_.shape == (5, 6)


# --------------------------------------------------------------------------------------
# the separable case (Beygelzimer et al. 2019, section 6 experiment)


def _mistakes_per_round(est, X, y):
    fb = BanditFeedback(y)
    est.partial_fit(X, fb, classes=[0, 1, 2])
    return fb.rewards_ == 0


def test_separable_linear_ova_stops_making_mistakes_short():
    X, y = make_separable_stream(100_000, strong=True, random_state=0)
    wrong = _mistakes_per_round(SeparableOneVsAll(random_state=0), X, y)
    assert wrong.sum() < 2_000
    assert wrong[50_000:].sum() <= 0.1 * wrong.sum()


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_separable_linear_ova_finite_mistakes(seed):
    """T = 10^6, strongly separable: the paper reports about 340 mistakes at
    T = 5 * 10^6; none or almost none in the second half."""
    X, y = make_separable_stream(10**6, strong=True, random_state=seed)
    wrong = _mistakes_per_round(SeparableOneVsAll(random_state=seed), X, y)
    assert wrong.sum() < 2_000
    assert wrong[500_000:].sum() <= 10


def test_rational_kernel_ova_weakly_separable_short():
    X, y = make_separable_stream(60_000, strong=False, random_state=0)
    kern = _mistakes_per_round(
        SeparableOneVsAll(kernel="rational", random_state=0), X, y
    )
    lin = _mistakes_per_round(SeparableOneVsAll(random_state=0), X, y)
    assert kern[40_000:].sum() < 0.1 * kern.sum()
    assert lin[40_000:].sum() > 5 * max(1, kern[40_000:].sum())


@pytest.mark.slow
def test_rational_kernel_ova_weakly_separable():
    """T = 3 * 10^5, weakly separable: the kernel learner's mistakes in the last
    third are under 10% of its total; the linear learner keeps making mistakes."""
    n = 300_000
    X, y = make_separable_stream(n, strong=False, random_state=0)
    kern = _mistakes_per_round(
        SeparableOneVsAll(kernel="rational", random_state=0), X, y
    )
    lin = _mistakes_per_round(SeparableOneVsAll(random_state=0), X, y)
    assert kern[2 * n // 3 :].sum() < 0.1 * kern.sum()
    assert lin[2 * n // 3 :].sum() > 5 * max(1, kern[2 * n // 3 :].sum())
