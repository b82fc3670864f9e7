"""Pure-Python/NumPy reference of SquareCB (Foster & Rakhlin 2020) with the NAG,
AdaGrad and SGD oracles (Ross, Mineiro & Langford 2013; Duchi et al. 2011).

Written from docs/algorithms.md (SquareCB), independently of the compiled kernel,
with the same uniforms (``_reference.py`` rules 1, 2, 4 and 6). Per round ``t``
(1-based, global), with ``k`` classes:

0. A fresh state is all zeros except ``b = initial_reward`` (with an intercept).
1. Predicted rewards ``s = W x + b`` (``W x`` summed sequentially over the stored
   entries, then ``+ b``; no ``b`` without intercept).
2. Greedy ``g`` among the exact maximisers (of the unclipped ``s``) by ``u2``.
   The schedule ``f(tau) = scale * math.pow(tau, exponent)`` (the default
   rule ``InverseGap(scale, exponent)``); class
   ``a``'s gamma is ``gamma_a = min(f(t), f(k * (n_a + 1)))`` (``n_a`` its
   updates so far). With ``c_a = min(max(s_a, 0), 1)`` and ``d_a = c_g - c_a``:
   ``p_a = 1 / (k + gamma_a d_a)`` if ``d_a > 0`` else ``1 / k``, for
   ``a != g`` in class order; ``p_g = 1 - (sum of those, in class order)``.
3. Draw ``a`` by inverse CDF on ``u1``; reward ``r = 1[a == y]``;
   ``h = 1 / p_g(a)`` with importance weighting, else 1.
4. Update regressor ``a`` only (``n_a += 1`` in every case), over the non-zero
   entries of the row in stored order (the CSR input has one entry per column):

   - normalized (NAG): for each entry with ``|x_i| > S_i``: if ``S_i > 0``,
     ``W_i *= S_i / |x_i|``; ``S_i = |x_i|``. With ``shared_scale`` the scale
     ``S_i`` is one per feature for all ``k`` regressors (every row of
     ``scale_`` holds it) and a growth rescales ``W_i`` of every regressor,
     ``W[c, i] *= S[c, i] / |x_i|`` then ``S[c, i] = |x_i|`` for every
     ``c = 0, ..., k - 1`` with ``|x_i| > S[c, i]`` (each row by its own scale;
     the rows are equal unless the option was switched on mid-stream);
     without, ``S`` and the rescale are regressor ``a``'s only. Then
     ``pred = sum W_i x_i (+ b)``
     and ``nrm = sum (x_i / S_i)^2 (+ 1)`` accumulated in the same loop;
     ``N_a += nrm``; stop if ``N_a <= 0``; ``rate = eta sqrt(n_a / N_a)``.
   - adagrad, sgd: ``pred = s_a`` (the round's score), ``rate = eta``.

   Then ``e = h (pred - r)``; stop if ``e == 0``. For each entry, ``g_i = e x_i``;
   adaptive oracles ``G_i += g_i^2`` and skip the coordinate while ``G_i == 0``;
   ``q_i = S_i sqrt(G_i)`` (normalized), ``sqrt(G_i)`` (adagrad), 1 (sgd);
   ``Q += (x_i x_i) / q_i``. Intercept: ``Gb += e^2`` (adaptive), ``q_b = sqrt(Gb)``
   or 1, ``Q += 1 / q_b``. With the ``step_cap`` c (in (0, 1]):
   ``rate = min(rate, c / (h Q))``.
   Finally ``W_i -= rate (e x_i) / q_i`` and ``b -= rate e / q_b``.

Scalar Python floats (IEEE double, ``math.sqrt``/``math.pow``, the C library's)
in the kernel's order of operations, so the state is reproduced bit for bit.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from _entry import Entry
from _reference import (
    canonical,
    greedy_label,
    logged_round,
    marginal_propensity,
    maximisers,
    resolved_exploration,
    sample,
    scores,
)

from skbandit import SquareCB
from skbandit.exploration import EpsilonGreedy, InverseGap


class SquareCBTrace(NamedTuple):
    state: dict[str, np.ndarray]
    played: np.ndarray
    greedy: np.ndarray
    rewards: np.ndarray
    propensities: np.ndarray


def clip01(v: float) -> float:
    return 0.0 if v < 0.0 else 1.0 if v > 1.0 else v


def igw(s: np.ndarray, g: int, gamma) -> np.ndarray:
    """Inverse gap weighting for greedy ``g`` on the clipped predictions, one
    ``gamma`` per class (exactly the operations of item 2)."""
    k = len(s)
    p = np.empty(k)
    total = 0.0
    best = clip01(float(s[g]))
    for a in range(k):
        if a != g:
            gap = best - clip01(float(s[a]))
            p[a] = 1.0 / (k + float(gamma[a]) * gap) if gap > 0.0 else 1.0 / k
            total = total + p[a]
    p[g] = 1.0 - total
    return p


def gammas(t: int, n_updates, k: int, scale, exponent):
    """``gamma_a = min(f(t), f(k (n_a + 1)))`` of item 2."""

    def f(tau: float) -> float:
        return scale * math.pow(tau, exponent)

    gt = f(float(t))
    return [min(gt, f(float(k) * (float(n) + 1.0))) for n in n_updates]


def fresh_state(k: int, d: int) -> dict[str, np.ndarray]:
    return {
        "coef_": np.zeros((k, d)),
        "intercept_": np.zeros(k),
        "scale_": np.zeros((k, d)),
        "grad_sq_": np.zeros((k, d)),
        "intercept_grad_sq_": np.zeros(k),
        "norm_sum_": np.zeros(k),
        "n_updates_": np.zeros(k, dtype=np.int64),
    }


def _entries(X, i: int):
    """(column, value) pairs of row ``i`` in stored order."""
    if sp.issparse(X):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        return list(zip(X.indices[lo:hi].tolist(), X.data[lo:hi].tolist(), strict=True))
    return list(enumerate(X[i].tolist()))


def _update(
    st, a, row, s_a, r, h, *, regressor, eta, fit_intercept, step_cap, shared_scale
):
    W, b = st["coef_"][a], st["intercept_"]
    S, G, Gb = st["scale_"][a], st["grad_sq_"][a], st["intercept_grad_sq_"]
    nz = [(i, v) for i, v in row if v != 0.0]
    st["n_updates_"][a] += 1
    if regressor == "normalized":
        pred, nrm = 0.0, 0.0
        for i, v in nz:
            av = abs(v)
            if av > S[i]:
                if shared_scale:
                    # one scale per feature: every regressor's w_i and s_i
                    # (each by its own s_i, all equal when shared from the start)
                    Sc, Wc = st["scale_"], st["coef_"]
                    for c in range(Wc.shape[0]):
                        if av > Sc[c, i]:
                            if Sc[c, i] > 0.0:
                                Wc[c, i] = float(Wc[c, i]) * (float(Sc[c, i]) / av)
                            Sc[c, i] = av
                else:
                    if S[i] > 0.0:
                        W[i] = float(W[i]) * (float(S[i]) / av)
                    S[i] = av
            pred = pred + float(W[i]) * v
            q = v / float(S[i])
            nrm = nrm + q * q
        if fit_intercept:
            pred = pred + float(b[a])
            nrm = nrm + 1.0
        st["norm_sum_"][a] = float(st["norm_sum_"][a]) + nrm
        N = float(st["norm_sum_"][a])
        if N <= 0.0:
            return
        rate = eta * math.sqrt(float(st["n_updates_"][a]) / N)
    elif regressor in ("adagrad", "sgd"):
        pred, rate = s_a, eta
    else:
        raise ValueError(regressor)
    e = h * (pred - r)
    if e == 0.0:
        return
    adaptive = regressor != "sgd"
    qs, Q = {}, 0.0
    for i, v in nz:
        q = 1.0
        if adaptive:
            g = e * v
            G[i] = float(G[i]) + g * g
            if not G[i] > 0.0:
                continue
            q = math.sqrt(G[i])
            if regressor == "normalized":
                q = float(S[i]) * q
        qs[i] = q
        Q = Q + (v * v) / q
    qb = 1.0
    if fit_intercept:
        if adaptive:
            Gb[a] = float(Gb[a]) + e * e
            qb = math.sqrt(Gb[a]) if Gb[a] > 0.0 else 0.0
        if qb > 0.0:
            Q = Q + 1.0 / qb
    if Q > 0.0:
        rate = min(rate, step_cap / (h * Q))
    for i, v in nz:
        if i in qs:
            W[i] = float(W[i]) - rate * (e * v) / qs[i]
    if fit_intercept and qb > 0.0:
        b[a] = float(b[a]) - rate * e / qb


def squarecb(
    X,
    y,
    U: np.ndarray,
    k: int,
    *,
    exploration=None,
    learning_rate: float = 0.5,
    fit_intercept: bool = True,
    regressor: str = "normalized",
    importance_weighted: bool = False,
    step_cap: float = 1.0,
    initial_reward: float = 1.0,
    shared_scale: bool = True,
    t0: int = 0,
    state: dict[str, np.ndarray] | None = None,
    logged=None,
) -> SquareCBTrace:
    """Replay one pass over the rows of X (rounds ``t0 + 1, ..., t0 + n``).

    ``logged=(actions, rewards, propensities)``: learn the logged rounds instead
    (``logged_round``: the regressor of the logged action takes the logged
    reward; ``h`` uses ``p_g(a)`` on the learner's own round, else the logged
    propensity).

    ``exploration``: the estimator's parameter. Inverse gap weighting on the
    clipped predictions (the default, ``InverseGap(scale, exponent)``) is
    computed by item 2 above (``igw``, ``gammas``), independently of the
    library; any other rule through its NumPy twin (``distribution``, with the
    update counts as the per-class context)."""
    n, d = X.shape
    X = canonical(X)
    rule = resolved_exploration("SquareCB", {"exploration": exploration}, k)
    spec_igw = rule.name == "inverse_gap" and rule.clip
    if spec_igw:
        scale, exponent = float(rule.scale), float(rule.exponent)
    if state is None:
        st = fresh_state(k, d)
        if fit_intercept:
            st["intercept_"][:] = initial_reward
    else:
        st = {a: v.copy() for a, v in state.items()}
    played = np.empty(n, dtype=np.int64)
    greedy = np.empty(n, dtype=np.int64)
    rewards = np.empty(n, dtype=np.float64)
    props = np.empty(n, dtype=np.float64)
    for j in range(n):
        t = t0 + j + 1
        row = _entries(X, j)
        cols = np.array([c for c, _ in row], dtype=np.int64)
        vals = np.array([v for _, v in row], dtype=np.float64)
        s = scores(st["coef_"], None if not sp.issparse(X) else cols, vals)
        if fit_intercept:
            s = s + st["intercept_"]
        g = greedy_label(s, U[j, 1])
        if spec_igw:
            gamma = gammas(t, st["n_updates_"], k, scale, exponent)

            def dist(c, s=s, gamma=gamma):
                return igw(s, c, gamma)

        else:
            counts = st["n_updates_"].copy()

            def dist(c, s=s, t=t, counts=counts):
                return rule.distribution(s, t, c, counts=counts)

        p = dist(g)
        a = sample(p, U[j, 0])
        props[j] = marginal_propensity(dist, maximisers(s), a)
        if logged is None:
            r = 1.0 if a == y[j] else 0.0  # the only use of the label
            prob = p[a]
        else:
            a, r, prob = logged_round(logged, j, a, p[a], props[j])
            props[j] = logged[2][j]
        h = 1.0 / prob if importance_weighted else 1.0
        _update(
            st,
            a,
            row,
            float(s[a]),
            r,
            h,
            regressor=regressor,
            eta=learning_rate,
            fit_intercept=fit_intercept,
            step_cap=step_cap,
            shared_scale=shared_scale,
        )
        played[j], greedy[j], rewards[j] = a, g, r
    return SquareCBTrace(st, played, greedy, rewards, props)


def nag_regression(
    X,
    r,
    *,
    eta: float,
    fit_intercept: bool = True,
    step_cap: float = 1.0,
    initial_reward: float = 1.0,
):
    """Algorithm NAG (Ross et al. 2013) on a plain regression stream ``(x_t, r_t)``:
    the oracle SquareCB runs on each class's sub-stream. Returns the state of one
    regressor ``(w, b, s, G, Gb, N, n)``, starting at ``b = initial_reward``."""
    st = fresh_state(1, X.shape[1])
    if fit_intercept:
        st["intercept_"][:] = initial_reward
    for j in range(X.shape[0]):
        row = _entries(X, j)
        _update(
            st,
            0,
            row,
            0.0,
            float(r[j]),
            1.0,
            regressor="normalized",
            eta=eta,
            fit_intercept=fit_intercept,
            step_cap=step_cap,
            shared_scale=False,
        )
    return st


# --------------------------------------------------------------------------------------
# The shared test suite's declaration of this module's learners (discovered by
# ``_registry.py``; see docs/adding_a_learner.md): the registry entries and the
# logged-feedback adapters of ``_reference_logged.delayed_schedule``.

# SquareCB: inverse gap weighting with a round-dependent gamma_t; each oracle
ENTRIES: list[Entry] = [
    Entry(
        SquareCB,
        params={"regressor": regressor, **extra},
        invalid_params=(
            ({"exploration": InverseGap(0.0)}, "scale"),
            ({"exploration": InverseGap(-1.0)}, "scale"),
            ({"exploration": InverseGap(exponent=-0.5)}, "exponent"),
            ({"exploration": InverseGap(clip="yes")}, "clip"),
            ({"learning_rate": 0.0}, "learning_rate"),
            ({"regressor": "ftrl"}, "regressor"),
            ({"fit_intercept": "yes"}, "fit_intercept"),
            ({"importance_weighted": 1.5}, "importance_weighted"),
            ({"step_cap": 0.0}, "step_cap"),
            ({"step_cap": 2.0}, "step_cap"),
            ({"initial_reward": 1.5}, "initial_reward"),
            ({"shared_scale": "yes"}, "shared_scale"),
        ),
        valid_edge_params=(
            {"exploration": InverseGap(exponent=0.0)},
            {"exploration": InverseGap(1e-8)},
            {"fit_intercept": False},
            {"importance_weighted": True},
            {"step_cap": 1e-3},
            {"initial_reward": 0.0},
            {"shared_scale": False},
        ),
        variant=variant,
        intercept=extra.get("fit_intercept", True),
        # scikit-learn's checks use features near 100: the "sgd" oracle needs a
        # small constant step, which learns slowly, so this variant keeps the
        # anytime sqrt(t) schedule (more exploration than the default 300 t^0.75)
        check_params={"regressor": regressor, **extra}
        | (
            {"learning_rate": 1e-5, "exploration": InverseGap(exponent=0.5)}
            if regressor == "sgd"
            else {}
        ),
    )
    for variant, regressor, extra in (
        ("", "normalized", {}),
        ("no-intercept", "normalized", {"fit_intercept": False}),
        ("adagrad", "adagrad", {"learning_rate": 0.1}),
        ("sgd", "sgd", {"learning_rate": 0.01}),
    )
]

# SquareCB playing epsilon-greedy over its predicted rewards
ENTRIES += [
    Entry(
        SquareCB,
        params={"exploration": EpsilonGreedy(0.05)},
        variant="epsilon-greedy",
        intercept=True,
    ),
]


def _logged_squarecb(params: dict, k: int):
    """The logged-feedback adapter of SquareCB (see ``_reference_logged``)."""
    import _reference_squarecb as ref_sq

    def run(X, U, t0, state, logged):
        tr = ref_sq.squarecb(
            X, np.zeros(X.shape[0], int), U, k, t0=t0, state=state,
            logged=logged, **params,
        )  # fmt: skip
        return tr.played, tr.propensities, tr.state

    return run, lambda s: dict(s)


LOGGED_ADAPTERS = {
    "SquareCB": _logged_squarecb,
}
