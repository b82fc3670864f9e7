"""Gaptron (van der Hoeven 2020): the kernel against the NumPy reference, the
surrogate-gap property of the reconstructed gap maps and step sizes (on the
compiled functions the kernel uses), logarithmic mistakes on a separable stream,
the x_norm_bound warning, predict_proba and the parameter resolution."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import _reference_gaptron as ref
import numpy as np
import pytest
import scipy.sparse as sp
from _data import label_values, make_stream
from _helpers import assert_benchmark_rows, run_benchmark
from _reference import marginal_propensity, maximisers
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from test_reference import _csr_with_duplicates

from skbandit import BanditFeedback, Gaptron, LoggedFeedback
from skbandit._core._explore import GapMapExplorer
from skbandit.datasets import make_synsep
from skbandit.exploration import EpsilonGreedy, GapMap, InverseGap, Softmax
from skbandit.linear_model._gaptron import (
    LOSS_CODES,
    GaptronKernel,
    full_information_step,
    gap_map,
    surrogate_gradient,
    surrogate_loss,
)
from skbandit.optim import AdaGrad, Constant

LOSSES = ("logistic", "hinge", "smooth_hinge")
FEEDBACKS = ("bandit", "full")
ROOT = Path(__file__).resolve().parents[1]

# Weights: the hinge losses' trajectories are bit-identical (same float operations
# in the same order); the logistic loss too where the C library's exp/log are
# those Python's math module calls (same platform). A tolerance would only hide a
# different order of operations, so none is allowed.


@pytest.fixture(autouse=True)
def _no_norm_warnings():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Gaptron: .* x_norm_bound")
        yield


def _as(X, container):
    return sp.csr_matrix(X) if container == "csr" else X


def _check(est, fb, trace, labels, y):
    assert_array_equal(fb.actions_, labels[trace.played])
    assert_array_equal(fb.rewards_, trace.rewards)
    assert_array_equal(fb.propensities_, trace.propensities)
    assert est.n_mistakes_ == int(np.sum(trace.played != y))
    assert est.n_greedy_mistakes_ == int(np.sum(trace.greedy != y))
    assert_array_equal(est.coef_, trace.W)
    assert est.grad_sq_sum_[0] == trace.grad_sq_sum
    assert_array_equal(est._average_acc, trace.A)


PARAM_SETS = [
    {},
    {"exploration": GapMap(0.3), "step_size": AdaGrad(64.0, per_coordinate=False)},
    {"exploration": GapMap(0.1), "step_size": Constant(0.7), "x_norm_bound": 2.0},
    {"exploration": GapMap(0.1), "step_size": "constant", "x_norm_bound": 2.0},
    {"exploration": None, "n_rounds": 500},
    # other rules: the update's importance weight is the rule's 1 / p(y)
    {"exploration": GapMap(0.1, loss="smooth_hinge")},
    {"exploration": "epsilon_greedy"},
    {"exploration": InverseGap(4.0, exponent=0.5)},
]


def _reference_cases() -> list:
    """``(loss, feedback, params, k, kind, container)`` cases: the default
    parameters (``PARAM_SETS[0]``) meet the full product of k x kind x container
    for every loss and feedback; every other parameter set meets every k once,
    with the (kind, container) pairs taken in turn (shifted by the set's and
    the loss's position), so that each loss, feedback and parameter set still
    meets every k, both kinds and both containers, without the product."""
    ks, kinds, containers = (2, 3, 7), ("gaussian", "binary"), ("dense", "csr")
    pairs = [(kind, c) for kind in kinds for c in containers]
    out = []
    for i_loss, loss in enumerate(LOSSES):
        for feedback in FEEDBACKS:
            for i, params in enumerate(PARAM_SETS):
                if i == 0:
                    combos = [(k, *pair) for k in ks for pair in pairs]
                else:
                    combos = [
                        (k, *pairs[(i + i_loss + j) % len(pairs)])
                        for j, k in enumerate(ks)
                    ]
                for k, kind, c in combos:
                    case = (loss, feedback, params, k, kind, c)
                    out.append(pytest.param(*case, id="-".join(map(str, case))))
    return out


@pytest.mark.parametrize(
    "loss, feedback, params, k, kind, container", _reference_cases()
)
def test_partial_fit_matches_reference(loss, feedback, params, k, kind, container):
    seed = 7 * k + len(kind) + len(loss)
    X, y = make_stream(n=250, d=12, k=k, kind=kind, seed=seed)
    X *= 3.0  # large steps: the scores leave the neighbourhood of zero
    labels = label_values(k, seed)
    p = {"loss": loss, "feedback": feedback, **params}
    est = Gaptron(random_state=seed, **p)
    fb = BanditFeedback(labels[y])
    est.partial_fit(_as(X, container), fb, classes=labels)
    trace = ref.run_partial_fit(
        _as(X, container), y, k, np.random.default_rng(seed), **p
    )
    _check(est, fb, trace, labels, y)
    assert (trace.rewards == 0).any() and (trace.rewards == 1).any()


@pytest.mark.parametrize("feedback", FEEDBACKS)
@pytest.mark.parametrize("loss", LOSSES)
def test_dense_and_csr_trajectories_are_identical(loss, feedback):
    """Same actions, propensities and weights, bitwise, dense vs CSR (and the
    reference on either input), over several calls."""
    k, seed = 5, 3
    X, y = make_stream(n=400, d=10, k=k, seed=seed)
    X *= 2.0
    p = {
        "loss": loss,
        "feedback": feedback,
        "exploration": GapMap(0.2),
        "step_size": "adagrad",
    }
    runs = []
    for container in ("dense", "csr"):
        est = Gaptron(random_state=seed, **p)
        logs = []
        for start, stop in [(0, 1), (1, 150), (150, 400)]:
            fb = BanditFeedback(y[start:stop])
            est.partial_fit(_as(X[start:stop], container), fb, classes=np.arange(k))
            logs.append(fb)
        runs.append((est, logs))
    (a, la), (b, lb) = runs
    assert_array_equal(a.coef_, b.coef_)
    assert_array_equal(a.grad_sq_sum_, b.grad_sq_sum_)
    for fa, fbb in zip(la, lb, strict=True):
        assert_array_equal(fa.actions_, fbb.actions_)
        assert_array_equal(fa.propensities_, fbb.propensities_)
    trace = ref.run_partial_fit(
        sp.csr_matrix(X), y, k, np.random.default_rng(seed), **p
    )
    assert_array_equal(a.coef_, trace.W)


@pytest.mark.parametrize("feedback", FEEDBACKS)
@pytest.mark.parametrize("loss", LOSSES)
def test_fit_matches_reference(loss, feedback):
    k, seed, n = 4, 12, 150
    X, y = make_stream(n=n, d=8, k=k, seed=seed)
    p = {
        "loss": loss,
        "feedback": feedback,
        "exploration": GapMap(0.25),
        "step_size": Constant(0.5),
    }
    est = Gaptron(random_state=seed, max_iter=3, **p)
    fb = BanditFeedback(y)
    est.fit(X, fb)
    rng = np.random.default_rng(seed)
    W, G, A = None, 0.0, None
    for epoch in range(3):
        rows = rng.permutation(n)
        tr = ref.run_partial_fit(
            X[rows], y[rows], k, rng, W0=W, G0=G, A0=A, t0=epoch * n, **p
        )
        W, G, A = tr.W, tr.grad_sq_sum, tr.A
    assert_array_equal(est.coef_, W)
    assert est.grad_sq_sum_[0] == G
    assert_array_equal(est._average_acc, A)
    assert est.t_ == 3 * n


@pytest.mark.parametrize("feedback", FEEDBACKS)
@pytest.mark.parametrize("loss", LOSSES)
def test_csr_rows_with_repeated_columns(loss, feedback):
    """A column stored twice counts as the sum of its values: in the scores, the
    update and ``||x||^2`` (AdaGrad, warning count); kernel == reference."""
    k, seed = 4, 21
    X, y = make_stream(n=200, d=10, k=k, n_empty=15, seed=seed)
    Xs = _csr_with_duplicates(X, seed)
    p = {
        "loss": loss,
        "feedback": feedback,
        "exploration": GapMap(0.2),
        "step_size": "adagrad",
    }
    est = Gaptron(random_state=seed, **p)
    fb = BanditFeedback(y)
    est.partial_fit(Xs, fb, classes=np.arange(k))
    trace = ref.run_partial_fit(Xs, y, k, np.random.default_rng(seed), **p)
    _check(est, fb, trace, np.arange(k), y)


@pytest.mark.parametrize("feedback", FEEDBACKS)
@pytest.mark.parametrize("loss", LOSSES)
def test_usps_stream_matches_reference(loss, feedback, usps_stream):
    """Bit-for-bit over the first 3,000 USPS rounds (256 features, 10 classes)."""
    X, y = usps_stream
    X, y = X[:3000], y[:3000]
    seed = 2020
    p = {
        "loss": loss,
        "feedback": feedback,
        "exploration": GapMap(0.1),
        "step_size": "adagrad",
    }
    est = Gaptron(random_state=seed, **p)
    fb = BanditFeedback(y)
    est.partial_fit(X, fb, classes=np.arange(10))
    trace = ref.run_partial_fit(X, y, 10, np.random.default_rng(seed), **p)
    _check(est, fb, trace, np.arange(10), y)


# --------------------------------------------------------------------------------------
# exact ties of the greedy label: the policy's marginal over the tied labels


def _tied_scores(k: int, m: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Scores with exactly ``m`` exact maximisers (a random subset of the
    classes), the others below: tied at 0 (+0.0 and -0.0 mixed: the hinge
    maps' top margin ``m*`` is then +0.0 or -0.0), at 0.7 and at -2.5."""
    out = []
    for top in (0.0, 0.7, -2.5):
        s = top - 0.5 - rng.random(k)
        tied = rng.choice(k, size=m, replace=False)
        s[tied] = top
        if top == 0.0:
            s[tied[::2]] = -0.0
        out.append(s)
    return out


def _tie_kernel(loss: str, scores: np.ndarray) -> tuple[GaptronKernel, np.ndarray]:
    """A kernel whose scores on the row ``x = [1]`` are ``scores`` (+0.0 for
    -0.0: the sum starts at +0.0)."""
    W = np.ascontiguousarray(scores.reshape(1, -1))  # feature-major (d = 1, k)
    kernel = GaptronKernel(
        W, LOSS_CODES[loss], Constant(1.0)._compile(), 1.0, False, np.zeros(1),
        np.zeros_like(W),
    )  # fmt: skip
    return kernel, np.ones(1)


@pytest.mark.parametrize("loss", LOSSES)
def test_tie_marginal_with_the_gap_map_is_the_reference_sum(loss):
    """With the gap map's rule the kernel reads the m tied labels' probabilities
    off one distribution (``ties_share_rate``, ``BaseKernel.marginal_over``);
    the propensity of the action it plays (``act``) must still be the
    reference's mean over the tied labels g of p_g, each from its own gap map,
    bit for bit, and the policy's distribution (``marginal_distribution``, a
    closed form) equal to it up to rounding: every loss, rate and number of
    ties."""
    rng = np.random.default_rng(LOSS_CODES[loss])
    for k in (2, 3, 5, 9, 20):
        for m in sorted({2, 3, k // 2, k - 1, k} & set(range(2, k + 1))):
            for s in _tied_scores(k, m, rng):
                kernel, x = _tie_kernel(loss, s)
                for eps in (0.0, 0.125, 1.0):
                    kernel.set_explorer(GapMapExplorer(LOSS_CODES[loss], eps))
                    assert kernel.explorer.ties_share_rate

                    def dist(g, s=s, eps=eps):
                        return ref.distribution(loss, s, g, eps)

                    ties = maximisers(s)
                    assert len(ties) == m
                    # every map is 1 at a tie (logistic: top probability <= 1/m;
                    # hinge, smooth hinge: m* = 0): each tied label plays uniform
                    for g in ties:
                        assert gap_map(LOSS_CODES[loss], s, int(g)) == 1.0
                    for u1 in np.linspace(0.0, 0.999, 5):
                        a, _, _, marginal = kernel.py_act(x, 3, float(u1), 0.5)
                        assert marginal == marginal_propensity(dist, ties, a), (
                            k, m, eps, a
                        )  # fmt: skip
                    want = [marginal_propensity(dist, ties, b) for b in range(k)]
                    got = kernel.py_marginal_distribution(s, 3)
                    # (its O(k) closed form: equal up to the sum's rounding)
                    assert_allclose(got, want, rtol=k * 2.0**-52, atol=0.0)


@pytest.mark.parametrize(
    "rule",
    [
        EpsilonGreedy(0.1),
        Softmax(0.1, scale=2.0),
        InverseGap(4.0, exponent=0.5, clip=False),
    ],
    ids=lambda r: type(r).__name__,
)
def test_tie_marginal_with_other_rules_is_the_reference_sum(rule):
    """Gaptron playing another rule takes the generic tie marginal (one
    distribution per tied label: a rule such as inverse gap weighting or the
    softmax does not play every tied label at one rate)."""
    rng = np.random.default_rng(1)
    for k in (3, 9):
        for m in (2, k):
            for s in _tied_scores(k, m, rng):
                kernel, x = _tie_kernel("logistic", s)
                kernel.set_explorer(rule._compile(k))
                assert not kernel.explorer.ties_share_rate

                def dist(g, s=s):
                    return rule.distribution(s, 3, g)

                ties = maximisers(s)
                for u1 in np.linspace(0.0, 0.999, 5):
                    a, _, _, marginal = kernel.py_act(x, 3, float(u1), 0.5)
                    assert marginal == marginal_propensity(dist, ties, a)
                want = [marginal_propensity(dist, ties, b) for b in range(k)]
                got = kernel.py_marginal_distribution(s, 3)
                assert_allclose(got, want, rtol=k * 2.0**-52, atol=0.0)


@pytest.mark.parametrize("loss", LOSSES)
def test_hashed_rows_with_tied_scores_match_the_reference(loss):
    """Sparse rows on a large column space (as hashed features): most rows meet
    only columns no earlier row had, so every class scores 0 and the k labels
    tie (a fresh model's common round at d = 2**20). The plays, the logged
    propensities (the tie marginal) and the state match the reference bit for
    bit, in the simulator and in the live loop (``sample_actions`` then
    ``partial_fit(row, LoggedFeedback(...))``)."""
    k, d, nnz, n, seed = 7, 1 << 14, 3, 300, 5
    rng = np.random.default_rng(seed)
    cols = np.sort(
        np.stack([rng.choice(d, nnz, replace=False) for _ in range(n)]), axis=1
    )
    vals = rng.random(n * nnz) + 0.5
    X = sp.csr_matrix((vals, cols.ravel(), np.arange(0, n * nnz + 1, nnz)), (n, d))
    y = rng.integers(k, size=n)
    seen: set[int] = set()
    n_fresh = 0
    for row in cols.tolist():
        n_fresh += seen.isdisjoint(row)
        seen.update(row)
    assert n_fresh > 0.8 * n  # rows whose k scores are all 0
    p = {"loss": loss, "feedback": "bandit", "exploration": GapMap(0.3)}
    classes = np.arange(k)
    trace = ref.run_partial_fit(X, y, k, np.random.default_rng(seed), **p)
    assert trace.rewards.sum() > 10  # some rounds learn
    est = Gaptron(random_state=seed, **p)
    fb = BanditFeedback(y)
    est.partial_fit(X, fb, classes=classes)
    _check(est, fb, trace, classes, y)
    live = Gaptron(random_state=seed, **p)
    for i in range(n):
        row = X[i : i + 1]
        action, propensity = live.sample_actions(row, classes=None if i else classes)
        assert action[0] == trace.played[i] and propensity[0] == trace.propensities[i]
        reward = [float(action[0] == y[i])]
        live.partial_fit(row, LoggedFeedback(action, reward, propensity))
    assert_array_equal(live.coef_, trace.W)
    assert live.grad_sq_sum_[0] == trace.grad_sq_sum
    assert_array_equal(live._average_acc, trace.A)


def test_bandit_update_needs_the_bit_only():
    """Bandit feedback: no update on a wrong play; on a right play the step is
    the full-information gradient weighted by 1 / p(y)."""
    k, d = 4, 5
    rng = np.random.default_rng(0)
    x = rng.standard_normal(d)
    for loss in LOSSES:
        est = Gaptron(
            loss=loss, exploration=GapMap(0.3), step_size=Constant(0.5), random_state=0
        )
        est.partial_fit(np.zeros((1, d)), [0], classes=np.arange(k))
        W = rng.standard_normal((k, d))
        est.coef_[:] = W
        kernel = est._make_kernel()
        a, g, p, _ = kernel.py_act(x, 2, 0.5, 0.5)
        s = kernel.py_scores()
        kernel.py_learn(x, 2, a, g, p, 0.0)
        assert_array_equal(est.coef_, W)  # wrong: nothing learnt
        kernel.py_learn(x, 2, a, g, p, 1.0)
        grad = surrogate_gradient(LOSS_CODES[loss], s, g, a)
        expected = W.copy()
        for r in range(k):
            if grad[r] != 0:
                expected[r] += -((0.5 * (1.0 / p)) * grad[r]) * x
        assert_array_equal(est.coef_, expected)


# --------------------------------------------------------------------------------------
# the surrogate-gap property, on the compiled functions the kernel uses


def _score_vectors(k: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Random scores at several scales, and adversarial ones: every class tied,
    a top margin m* (or a label margin m) just below, at and just above each
    breakpoint of the maps and losses (0, 1/(2k), 1 and the logistic map's top
    probability 1/2), huge and tiny spreads."""
    out = [np.zeros(k)]
    for scale in (1e-3, 0.1, 1.0, 5.0, 50.0):
        out += [scale * rng.standard_normal(k) for _ in range(20)]
    breakpoints = [0.0, 1.0 / (2 * k), 1.0, 0.5, 2.0]
    eps = [0.0, 1e-12, -1e-12, 1e-6, -1e-6, 1e-3, -1e-3]
    for b in breakpoints:
        for e in eps:
            m = b + e
            for _ in range(3):
                s = rng.standard_normal(k)
                top, second = rng.choice(k, size=2, replace=False)
                s = np.minimum(s, 0.0)
                s[second] = 0.0
                s[top] = m
                out.append(s)
                # two classes tied below the top (runner-up ties)
                if k > 2:
                    s2 = s.copy()
                    s2[[c for c in range(k) if c not in (top, second)][0]] = 0.0
                    out.append(s2)
    # logistic: top softmax probability near 1/2 (Z near 2)
    for q in (0.5 - 1e-9, 0.5, 0.5 + 1e-9, 0.9, 1 - 1e-9):
        s = np.full(k, -np.inf)
        s[0] = 0.0
        rest = (1 - q) / q / (k - 1)  # sum_{r>0} exp(s_r) = (1 - q) / q
        s[1:] = math.log(rest)
        out.append(s)
    return out


def _gaps(loss: str, s: np.ndarray, g: int, y: int, etas: list[float],
          gammas: list[float], bandit: bool) -> list[float]:  # fmt: skip
    """E_p[1(played != y)] + (eta / 2) E||g_hat||^2 - loss for each (eta, gamma)
    of ``zip(etas, gammas)``, with ||x|| = X = 1 (the worst case of
    ||grad||^2 ||x||^2 for rows within the bound). The map, gradient and loss,
    which do not depend on gamma, are computed once for all the gammas; p[y] is
    (1 - u) + u / k for y = g, else u / k (the same operations as filling p
    with u / k and adding 1 - u at g)."""
    code = LOSS_CODES[loss]
    k = len(s)
    a = gap_map(code, s, g)
    grad = surrogate_gradient(code, s, g, y)
    gn = float(grad @ grad)
    loss_value = surrogate_loss(code, s, g, y)
    out = []
    for eta, gamma in zip(etas, gammas, strict=True):
        u = gamma + (1.0 - gamma) * a
        py = u / k
        if y == g:
            py += 1 - u
        # E[1(played = y) / p(y)^2] ||grad||^2 with bandit feedback
        gn_p = gn / py if bandit else gn
        out.append((1.0 - py) + 0.5 * eta * gn_p - loss_value)
    return out


GAP_MAXIMA: dict[tuple[str, str], float] = {}


@pytest.mark.parametrize("feedback", FEEDBACKS)
@pytest.mark.parametrize("loss", LOSSES)
def test_surrogate_gap_property(loss, feedback):
    """For every score vector, greedy label (the maximisers, ties included) and
    label: gap <= 1e-12 with full information (gamma = 0, eta = eta_full) and
    <= gamma with bandit feedback (eta = gamma eta_full / k), k = 2..50."""
    rng = np.random.default_rng(len(loss) + len(feedback))
    worst = -np.inf
    for k in (2, 3, 4, 5, 7, 10, 20, 50):
        eta_full = full_information_step(loss, k, 1.0)
        gammas = [0.0] if feedback == "full" else [1e-3, 0.05, 0.3, 1.0]
        for s in _score_vectors(k, rng):
            s = np.ascontiguousarray(s, dtype=np.float64)
            if not np.isfinite(s).all():
                s = np.where(np.isfinite(s), s, -745.0)
            greedy = np.flatnonzero(s == s.max())
            etas = [
                eta_full if feedback == "full" else gm * eta_full / k for gm in gammas
            ]
            bounds = [1e-12 if feedback == "full" else gm + 1e-12 for gm in gammas]
            for g in greedy:
                for y in range(k):
                    gaps = _gaps(loss, s, int(g), y, etas, gammas, feedback == "bandit")
                    for gamma, bound, gap in zip(gammas, bounds, gaps, strict=True):
                        excess = gap - (bound - 1e-12)
                        worst = max(worst, excess)
                        assert gap <= bound, (k, s.tolist(), int(g), y, gamma, gap)
    GAP_MAXIMA[(loss, feedback)] = worst
    print(f"max surrogate gap - bound, {loss}/{feedback}: {worst:.3e}")


@pytest.mark.parametrize("loss", LOSSES)
def test_compiled_maps_equal_the_reference(loss):
    """The compiled gap map, gradient and loss are the reference's, bitwise."""
    rng = np.random.default_rng(5)
    code = LOSS_CODES[loss]
    for k in (2, 3, 9, 50):
        for s in _score_vectors(k, rng)[:80]:
            s = np.where(np.isfinite(s), s, -745.0).astype(np.float64)
            for g in np.flatnonzero(s == s.max()):
                assert gap_map(code, s, int(g)) == ref.gap_map(loss, s, int(g))
                for y in range(k):
                    assert_array_equal(
                        surrogate_gradient(code, s, int(g), y),
                        ref.gradient(loss, s, int(g), y),
                    )
                    assert surrogate_loss(code, s, int(g), y) == ref.loss_value(
                        loss, s, int(g), y
                    )


@pytest.mark.parametrize("loss", LOSSES)
def test_gradient_is_the_derivative_of_the_loss(loss):
    """Central differences of the compiled loss agree with the compiled gradient
    away from the kinks."""
    rng = np.random.default_rng(9)
    code = LOSS_CODES[loss]
    h = 1e-6
    checked = 0
    for _ in range(300):
        k = int(rng.integers(2, 8))
        s = rng.standard_normal(k) * 1.5
        g = int(np.argmax(s))
        y = int(rng.integers(k))
        grad = surrogate_gradient(code, s, g, y)
        num = np.zeros(k)
        for r in range(k):
            e = np.zeros(k)
            e[r] = h
            if int(np.argmax(s + e)) != g or int(np.argmax(s - e)) != g:
                break
            num[r] = (
                surrogate_loss(code, s + e, g, y) - surrogate_loss(code, s - e, g, y)
            ) / (2 * h)
        else:
            sorted_s = np.sort(s)
            m_y = s[y] - np.max(np.delete(s, y))
            near_kink = min(abs(m_y), abs(m_y - 1), abs(sorted_s[-1] - sorted_s[-2]))
            if near_kink < 1e-3 or (loss == "hinge" and abs(
                1 - 2 * k * (sorted_s[-1] - sorted_s[-2])) < 1e-3):  # fmt: skip
                continue
            assert_allclose(num, grad, atol=1e-5)
            checked += 1
    assert checked > 100


# --------------------------------------------------------------------------------------
# logarithmic mistakes with full information on a separable stream


@pytest.fixture(scope="module")
def synsep():
    X, y = make_synsep(100_000, sparse=True, random_state=0)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    return X, y, float(norms.max())


@pytest.mark.parametrize("loss", LOSSES)
def test_full_information_mistakes_grow_logarithmically(loss, synsep):
    """SynSep is linearly separable: with the theory's step (X = max ||x||) the
    mistakes of rounds 50,000-100,000 are at most a quarter of those of the
    first 10,000 (a regret that grows at most logarithmically)."""
    X, y, x_max = synsep
    est = Gaptron(loss=loss, feedback="full", x_norm_bound=x_max, random_state=0)
    counts = []
    for start, stop in [(0, 10_000), (10_000, 50_000), (50_000, 100_000)]:
        before = est.n_mistakes_ if start else 0
        est.partial_fit(X[start:stop], y[start:stop], classes=np.arange(9))
        counts.append(est.n_mistakes_ - before)
    print(f"{loss}: mistakes in [0,10k) {counts[0]}, [10k,50k) {counts[1]}, "
          f"[50k,100k) {counts[2]}")  # fmt: skip
    assert counts[0] > 0
    assert counts[2] <= counts[0] / 4, counts


# --------------------------------------------------------------------------------------
# the x_norm_bound warning, predict_proba, parameters


def _norm_warnings(caught):
    return [str(w.message) for w in caught if "x_norm_bound" in str(w.message)]


def test_one_warning_per_learner_about_large_rows(monkeypatch):
    """A chunked loop warns once (not once per call or block); clone() and a
    fresh instance warn again; fit starts a new learner and warns again."""
    monkeypatch.setattr("skbandit._base._transaction._BLOCK_ROWS", 10)
    X, y = make_stream(n=100, d=6, k=3, n_empty=0, seed=1)
    norms = np.linalg.norm(X, axis=1)
    bound = float(np.median(norms))
    est = Gaptron(step_size="constant", x_norm_bound=bound, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for chunk in np.array_split(np.arange(100), 10):
            est.partial_fit(X[chunk], y[chunk], classes=np.arange(3))
    msgs = _norm_warnings(caught)
    assert len(msgs) == 1, msgs
    assert "not rescaled" in msgs[0] and f"x_norm_bound={bound!r}" in msgs[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clone(est).partial_fit(X, y, classes=np.arange(3))
        Gaptron(step_size="constant", x_norm_bound=bound).partial_fit(
            X, y, classes=[0, 1, 2]
        )
        est.partial_fit(X, y)  # the same learner: already warned
    assert len(_norm_warnings(caught)) == 2
    # fit: one warning for all its passes; rows within the bound: none
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
        est.partial_fit(X, y)
        Gaptron(step_size="constant", x_norm_bound=1.001 * norms.max()).fit(X, y)
        est.exploration_distribution(X)
        est.predict(X)
    assert len(_norm_warnings(caught)) == 1


def test_no_norm_warning_when_the_bound_is_unused():
    """x_norm_bound enters only step_size="constant" and the "auto" gamma with
    n_rounds: the default AdaGrad-norm step and a constant step do not warn."""
    X = np.full((20, 4), 3.0)
    y = np.arange(20) % 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Gaptron(random_state=0).fit(X, y)
        Gaptron(step_size=Constant(0.1), exploration=GapMap(0.2), random_state=0).fit(
            X, y
        )
        Gaptron(feedback="full", random_state=0).fit(X, y)
    assert _norm_warnings(caught) == []
    for params in (
        {"step_size": "constant"},
        {"step_size": Constant(0.1), "n_rounds": 100},
    ):
        with pytest.warns(UserWarning, match="x_norm_bound"):
            Gaptron(**params, random_state=0).fit(X, y)


def test_warning_reports_the_largest_norm():
    X = np.array([[3.0, 4.0], [0.1, 0.0], [6.0, 8.0]])
    with pytest.warns(UserWarning, match=r"2 of the rows .*largest \|\|x\|\| seen: 10"):
        Gaptron(step_size="constant", random_state=0).partial_fit(
            X, [0, 1, 0], classes=[0, 1]
        )


def test_predict_proba_only_for_the_logistic_loss():
    X, y = make_stream(n=200, d=6, k=4, seed=2)
    est = Gaptron(loss="logistic", feedback="full", random_state=0).fit(X, y)
    P = est.predict_proba(X)
    S = X @ est.average_coef_.T  # average=True: the averaged weights
    E = np.exp(S - S.max(axis=1, keepdims=True))
    assert_allclose(P, E / E.sum(axis=1, keepdims=True), rtol=1e-12)
    # log(predict_proba), -inf where a probability underflows (scikit-learn's
    # check_classifiers_train compares the two, inf locations included)
    with np.errstate(divide="ignore"):
        assert_array_equal(est.predict_log_proba(X), np.log(P))
    assert_array_equal(est.classes_[np.argmax(P, axis=1)], est.predict(X))
    for loss in ("hinge", "smooth_hinge"):
        other = Gaptron(loss=loss, random_state=0).fit(X, y)
        assert not hasattr(other, "predict_proba")
        with pytest.raises(AttributeError):
            other.predict_proba(X)


def test_neg_log_loss_scoring_works_in_cross_validation():
    from sklearn.model_selection import cross_val_score

    X, y = make_stream(n=300, d=8, k=3, seed=4)
    scores = cross_val_score(
        Gaptron(feedback="full", random_state=0), X, y, cv=3, scoring="neg_log_loss"
    )
    assert np.isfinite(scores).all() and (scores < 0).all()


@pytest.mark.parametrize("loss", LOSSES)
def test_exploration_distribution_is_the_gap_map_policy(loss):
    X, y = make_stream(n=200, d=6, k=5, seed=6)
    est = Gaptron(
        loss=loss, exploration=GapMap(0.1), step_size=Constant(0.5), random_state=0
    ).fit(X, y)
    Xq = X[:40]
    P = est.exploration_distribution(Xq)
    S = Xq @ est.coef_.T
    for i in range(len(Xq)):
        s = np.ascontiguousarray(S[i])
        G = np.flatnonzero(s == s.max())
        expected = sum(ref.distribution(loss, s, int(g), 0.1) for g in G) / len(G)
        assert_allclose(P[i], expected, rtol=1e-12, atol=1e-15)


def test_parameter_resolution():
    k = 9
    for loss in LOSSES:
        rule, eta, adagrad = ref.resolve(loss, "full", k, step_size="constant")
        assert rule.get_params() == {"epsilon": 0.0, "loss": loss}
        assert (eta, adagrad) == (full_information_step(loss, k, 1.0), False)
        rule, eta, adagrad = ref.resolve(loss, "bandit", k)
        assert rule.epsilon == 0.125 and (eta, adagrad) == (1024.0, True)
        est = Gaptron(loss=loss, step_size="constant", n_rounds=10**6, x_norm_bound=2.0)
        gamma = est._auto_gamma(k)
        resolved = ref.resolve(loss, "bandit", k, x_norm_bound=2.0, n_rounds=10**6)
        assert gamma == resolved[0].epsilon
        c = {"logistic": 1 / (4 * math.log(2)), "hinge": 1.0, "smooth_hinge": 2.0}[loss]
        assert gamma == pytest.approx(min(1, k * 2.0 * math.sqrt(c / 1e6)))
        assert est._theory_step(k, gamma) == (
            gamma * full_information_step(loss, k, 2.0) / k
        )  # fmt: skip
    assert Gaptron()._auto_gamma(k) == 0.125  # docstring: 'else 0.125'
    assert Gaptron(feedback="full")._auto_gamma(k) == 0.0
    assert full_information_step("logistic", 4, 1.0) == 2 * math.log(2) / 4
    assert full_information_step("hinge", 4, 2.0) == 1 / 32
    assert full_information_step("smooth_hinge", 4, 1.0) == 1 / 16


def test_step_size_names_play_the_documented_rules():
    """``step_size="adagrad"`` is ``AdaGrad(1024, per_coordinate=False)``,
    ``"constant"`` the theory's step ``gamma eta_full / k``; a nested
    ``set_params`` on a name starts from that rule with these values."""
    k = 3
    X, y = make_stream(n=60, d=4, k=k, seed=0)
    default = Gaptron(random_state=0).partial_fit(X, y, classes=np.arange(k))
    assert type(default.step_size_) is AdaGrad
    assert default.step_size_.get_params() == {
        "learning_rate": 1024.0,
        "per_coordinate": False,
    }
    same = Gaptron(
        step_size=AdaGrad(1024.0, per_coordinate=False), random_state=0
    ).partial_fit(X, y, classes=np.arange(k))
    assert_array_equal(same.coef_, default.coef_)
    theory = Gaptron(step_size="constant", exploration=GapMap(0.1), random_state=0)
    theory.partial_fit(X, y, classes=np.arange(k))
    eta = 0.1 * full_information_step("logistic", k, 1.0) / k
    assert type(theory.step_size_) is Constant
    assert theory.step_size_.learning_rate == eta
    explicit = Gaptron(step_size=Constant(eta), exploration=GapMap(0.1), random_state=0)
    explicit.partial_fit(X, y, classes=np.arange(k))
    assert_array_equal(explicit.coef_, theory.coef_)
    tuned = Gaptron().set_params(step_size__learning_rate=8.0)
    assert type(tuned.step_size) is AdaGrad
    assert tuned.step_size.get_params() == {
        "learning_rate": 8.0,
        "per_coordinate": False,
    }
    assert Gaptron().step_size == "adagrad"  # the parameter itself is untouched


def test_bandit_refuses_gamma_zero():
    X, y = make_stream(n=20, d=4, k=3, seed=0)
    with pytest.raises(ValueError, match="'exploration' parameter.*epsilon > 0"):
        Gaptron(exploration=GapMap(0.0)).fit(X, y)
    Gaptron(exploration=GapMap(0.0), feedback="full").fit(X, y)
    # rules that leave labels unplayed: refused with bandit feedback only
    for rule in ("greedy", "conservative"):
        with pytest.raises(ValueError, match="positive probability"):
            Gaptron(exploration=rule).fit(X, y)
        Gaptron(exploration=rule, feedback="full").fit(X, y)


def test_bench_gaptron_smoke_run():
    out = run_benchmark(
        "bench_gaptron.py", "--n-rounds", "1500", "--repeat", "1",
        "--inputs", "csr", "--numpy-rounds", "200", "--vw-rounds", "200",
    )  # fmt: skip
    assert_benchmark_rows(
        out,
        ("Banditron", "Gaptron logistic", "Gaptron hinge", "Gaptron smooth_hinge"),
    )


def test_norm_warning_points_at_the_callers_line():
    """The ||x|| > x_norm_bound warning is raised deep inside the pass (a block
    hook) but is attributed to the user's call, not to library code."""
    X = np.full((5, 4), 3.0)
    est = Gaptron(step_size="constant", random_state=0)
    for call in (
        lambda: est.partial_fit(X, [0, 1, 0, 1, 0], classes=[0, 1]),
        lambda: est.fit(X, [0, 1, 0, 1, 0]),
    ):
        with pytest.warns(UserWarning, match="x_norm_bound") as record:
            call()
        assert {w.filename for w in record} == {__file__}
