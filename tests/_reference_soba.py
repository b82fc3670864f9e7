"""Pure-NumPy references of SOBA (Beygelzimer, Orabona & Zhang 2017) and PNewtron.

Written from docs/algorithms.md (SOBA, PNewtron) and the paper's Algorithm 1, with the
conventions of ``_reference.py`` (same ``X``/``y``/``U`` arguments, two uniforms per
round, scores summed sequentially, ties broken with ``u2``, inverse-CDF sampling on
``u1``, logged propensity = marginal over tied greedy labels).

- ``soba_full``: Algorithm 1 as written. It forms ``A = a I + Σ n_s z_s z_sᵀ``
  explicitly and solves ``A⁻¹θ`` and ``A⁻¹z`` directly with ``np.linalg.solve``
  (no Sherman-Morrison, no incremental ``W``); the kernel agrees to a rounding
  tolerance.
- ``soba_diag``: SOBAdiag with the same float operations as the kernel: bit-identical.
- ``pnewtron``: the diagonal Newtron, same float operations as the kernel
  (``math.exp`` per class, as C's ``exp``): bit-identical.

The rows are read through their non-zero columns only (a zero entry changes
nothing). CSR rows must not store a column twice (the estimators sum duplicates
in the shared validation before their kernels see them; ``canonical`` does it
here).
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
)
from _reference import sample as sample_inverse_cdf
from _reference import scores as row_scores

from skbandit import SOBA, PNewtron
from skbandit.exploration import EpsilonGreedy, InverseGap, Softmax


class SOBATrace(NamedTuple):
    W: np.ndarray
    played: np.ndarray
    greedy: np.ndarray
    rewards: np.ndarray
    propensities: np.ndarray
    theta: np.ndarray
    A: np.ndarray  # (k, d) diagonal, or (kd, kd) for the full variant
    cumulative_margin: float
    exploration_sum: float
    n_updates: int
    updated: np.ndarray  # bool per round: n_t
    margins: np.ndarray  # S after each round


def _row(X, i):
    """(columns, values) of row i, as stored (dense: every column)."""
    if sp.issparse(X):
        a, b = X.indptr[i], X.indptr[i + 1]
        return X.indices[a:b], X.data[a:b]
    return np.arange(X.shape[1]), X[i]


def _ybar(s: np.ndarray, y: int, greedy: int) -> int:
    """argmax_{i != y} s_i: the greedy label if it is not y, else the first
    maximiser among the other classes."""
    if greedy != y:
        return greedy
    others = [i for i in range(len(s)) if i != y]
    return max(others, key=lambda i: (s[i], -i))


def soba(
    X,
    y,
    U: np.ndarray,
    k: int,
    *,
    exploration,
    a: float = 1.0,
    covariance: str = "diag",
    t0: int = 0,
    state: dict | None = None,
    logged=None,
) -> SOBATrace:
    """SOBA over the rows of ``X`` with uniforms ``U``; ``t0`` rounds before.

    ``exploration``: the rule played (a resolved ``skbandit.exploration``
    object, through its NumPy twin; the paper's ``EpsilonGreedy(gamma)``, its
    App. A rate ``EpsilonGreedy("adaptive")``, which reads
    ``E = sum_s n_s z_s^T A_s^-1 z_s``).

    ``state`` (from a previous trace's fields) continues a learner; ``logged``
    (actions, rewards, propensities) learns logged rounds (``logged_round``)."""
    X = canonical(X)
    n, d = X.shape
    full = covariance == "full"
    if state is None:
        theta = np.zeros((k, d))
        A = np.eye(k * d) * a if full else np.full((k, d), float(a))
        S, E, n_upd = 0.0, 0.0, 0
        W = np.zeros((k, d))
    else:
        theta, A = state["theta"].copy(), state["A"].copy()
        S, E, n_upd = state["S"], state["E"], state["n_updates"]
        W = state["W"].copy()
    played = np.empty(n, dtype=np.int64)
    greedy = np.empty(n, dtype=np.int64)
    rewards = np.empty(n, dtype=np.int8)
    props = np.empty(n)
    updated = np.zeros(n, dtype=bool)
    margins = np.empty(n)
    for i in range(n):
        t = t0 + i + 1
        cols, vals = _row(X, i)
        s = row_scores(W, cols, vals)
        g = greedy_label(s, U[i, 1])

        def dist(c, s=s, t=t, E=E):
            return exploration.distribution(s, t, c, statistic=E)

        p = dist(g)
        act = sample_inverse_cdf(p, U[i, 0])
        props[i] = marginal_propensity(dist, maximisers(s), act)
        if logged is None:
            reward, prob = act == y[i], p[act]
        else:
            act, reward, prob = logged_round(logged, i, act, p[act], props[i])
        played[i], greedy[i], rewards[i] = act, g, reward
        if reward:
            yy = act
            py = prob
            yb = _ybar(s, yy, g)
            nz = vals != 0.0
            cols, vals = cols[nz], vals[nz]
            wg = (s[yb] - s[yy]) / py
            wz = math.sqrt(py) * wg
            zscale = math.sqrt(py) / py
            z = zscale * vals
            if full:
                zvec = np.zeros(k * d)
                zvec[yb * d + cols] = z
                zvec[yy * d + cols] = -z
                q = float(zvec @ np.linalg.solve(A, zvec))
            else:
                terms = np.concatenate([z * z / A[yb, cols], z * z / A[yy, cols]])
                q = float(np.cumsum(terms)[-1]) if len(terms) else 0.0
            m = (wz * wz + 2.0 * wg) / (1.0 + q)
            if S + m >= 0.0:
                S = S + m
                E = E + q / (1.0 + q)
                n_upd += 1
                updated[i] = True
                gvec = vals / py
                theta[yb, cols] -= gvec
                theta[yy, cols] += gvec
                if full:
                    A += np.outer(zvec, zvec)
                    W = np.linalg.solve(A, theta.reshape(-1)).reshape(k, d)
                else:
                    A[yb, cols] += z * z
                    A[yy, cols] += z * z
                    W[yb, cols] = theta[yb, cols] / A[yb, cols]
                    W[yy, cols] = theta[yy, cols] / A[yy, cols]
        margins[i] = S
    return SOBATrace(
        W, played, greedy, rewards, props, theta, A, S, E, n_upd, updated, margins
    )


class PNewtronTrace(NamedTuple):
    W: np.ndarray
    played: np.ndarray
    greedy: np.ndarray
    rewards: np.ndarray
    propensities: np.ndarray
    b: np.ndarray
    A: np.ndarray
    U: np.ndarray
    norm_state: np.ndarray


def softmax(s: np.ndarray, alpha: float) -> np.ndarray:
    """exp(α s_r − max α s) / Σ, with math.exp and sequential sums."""
    mx = max(alpha * v for v in s)
    e = np.array([math.exp(alpha * v - mx) for v in s])
    return e / np.cumsum(e)[-1]


def pnewtron(
    X,
    y,
    U: np.ndarray,
    k: int,
    *,
    exploration,
    scale: float = 10.0,
    beta: float = 0.01,
    D: float = 1.0,
    t0: int = 0,
    W0=None,
    state: dict | None = None,
    logged=None,
) -> PNewtronTrace:
    """PNewtron (Hazan & Kale 2011), rescaling to ||W||_F <= D every round, with
    the kernel's lazy scale (docs/algorithms.md): W = sigma Wu, Wu = -b/A on the
    entries updated so far, ||Wu||^2 kept incrementally (entry by entry, row
    then class order) and summed exactly once k d entries were updated since
    the last exact sum; scores sigma (Wu x). ``exploration``: the rule played
    (resolved; the paper's ``Softmax(gamma, scale=alpha)``), through its NumPy
    twin; ``t0`` rounds were played before."""
    X = canonical(X)
    n, d = X.shape
    if state is None:
        Wu, b, A = np.zeros((k, d)), np.zeros((k, d)), np.full((k, d), 1.0 / D)
        ns = np.array([0.0, 1.0, 0.0])
    else:
        Wu, b, A, ns = (state[n].copy() for n in ("U", "b", "A", "ns"))
    played = np.empty(n, dtype=np.int64)
    greedy = np.empty(n, dtype=np.int64)
    rewards = np.empty(n, dtype=np.int8)
    props = np.empty(n)
    invk = 1.0 / k
    for i in range(n):
        cols, vals = _row(X, i)
        s = ns[1] * row_scores(Wu, cols, vals)
        g = greedy_label(s, U[i, 1])

        def dist(c, s=s, t=t0 + i + 1):
            return exploration.distribution(s, t, c)

        pp = dist(g)
        act = sample_inverse_cdf(pp, U[i, 0])
        props[i] = marginal_propensity(dist, maximisers(s), act)
        if logged is None:
            reward, prob = act == y[i], pp[act]
        else:
            act, reward, prob = logged_round(logged, i, act, pp[act], props[i])
        played[i], greedy[i], rewards[i] = act, g, reward
        P = softmax(s, scale)
        e = np.zeros(k)
        e[act] = 1.0
        if reward:
            co = ((1.0 - P[act]) / prob) * (invk - e)
            kappa = prob
        else:
            co = (P[act] / prob) * (e - invk)
            kappa = 1.0
        gw = float(np.cumsum(co * s)[-1])
        kb = kappa * beta
        w = 1.0 - kb * gw
        nz = vals != 0.0
        cols, vals = cols[nz], vals[nz]
        G = co[:, None] * vals[None, :]
        A[:, cols] += kb * (G * G)
        b[:, cols] += w * G
        nrm, touched = float(ns[0]), float(ns[2])
        for c in cols:  # row order, then class order
            for r in range(k):
                old = float(Wu[r, c])
                Wu[r, c] = -b[r, c] / A[r, c]
                nrm = (nrm - old * old) + float(Wu[r, c]) * float(Wu[r, c])
            touched += k
        if touched >= k * d:
            nrm = float(np.cumsum(Wu.reshape(-1) * Wu.reshape(-1))[-1])
            touched = 0.0
        ns = np.array([nrm, D / math.sqrt(nrm) if nrm > D * D else 1.0, touched])
    W = ns[1] * Wu
    return PNewtronTrace(W, played, greedy, rewards, props, b, A, Wu, ns)


# --------------------------------------------------------------------------------------
# The shared test suite's declaration of this module's learners (discovered by
# ``_registry.py``; see docs/adding_a_learner.md): the registry entries and the
# logged-feedback adapters of ``_reference_logged.delayed_schedule``.

ENTRIES: list[Entry] = [
    Entry(
        SOBA,
        params={"exploration": EpsilonGreedy(0.2)},
        invalid_params=(
            ({"exploration": EpsilonGreedy(1.5)}, "epsilon"),
            ({"exploration": EpsilonGreedy("auto")}, "epsilon"),
            ({"exploration": EpsilonGreedy("adaptive", decay=0.5)}, "decay"),
            ({"a": 0.0}, "'a' parameter"),
            ({"a": -1}, "'a' parameter"),
            ({"covariance": "lowrank"}, "covariance"),
            ({"max_memory": 0}, "max_memory"),
        ),
        valid_edge_params=(
            {"exploration": EpsilonGreedy(1.0)},
            {"exploration": EpsilonGreedy(1e-6)},
            {"exploration": EpsilonGreedy("adaptive")},
        ),
        epsilon_greedy=True,
        variant="diag",
    ),
    Entry(
        SOBA,
        params={"exploration": EpsilonGreedy(0.2), "covariance": "full"},
        valid_edge_params=({"exploration": EpsilonGreedy("adaptive")}, {"a": 1e-3}),
        epsilon_greedy=True,
        variant="full",
        check_params={"covariance": "full"},
    ),
    # SOBA with inverse gap weighting on its scores
    # (a small scale: the gaps are in score units, and SOBA learns only on
    # rounds it got right, so a near-greedy rule stalls it)
    Entry(
        SOBA,
        params={"exploration": InverseGap(0.1, exponent=0.5)},
        variant="inverse-gap",
    ),
    Entry(
        PNewtron,
        params={"exploration": Softmax(0.1)},
        invalid_params=(
            ({"exploration": Softmax(-0.1)}, "epsilon"),
            ({"exploration": Softmax(1.5)}, "epsilon"),
            ({"exploration": Softmax(0.1, scale=-1.0)}, "scale"),
            ({"scale": -1.0}, "scale"),
            ({"beta": -1.0}, "beta"),
            ({"D": 0.0}, "'D' parameter"),
        ),
        valid_edge_params=(
            {"exploration": Softmax(0.0)},
            {"exploration": Softmax(1.0)},
            {"scale": 0.0},
        ),
    ),
    # PNewtron playing epsilon-greedy: its update's p' is the rule's
    Entry(
        PNewtron,
        params={"exploration": EpsilonGreedy(0.1)},
        variant="epsilon-greedy",
    ),
]


def _logged_soba(params: dict, k: int):
    """The logged-feedback adapter of SOBA (see ``_reference_logged``)."""
    from _reference import resolved_exploration

    # the rule the learner plays (the references compute it with its NumPy twin)
    rule = resolved_exploration("SOBA", params, k) if "exploration" in params else None

    def run(X, U, t0, state, logged):
        tr = soba(
            X, np.zeros(X.shape[0], int), U, k, exploration=rule,
            a=params.get("a", 1.0), covariance=params.get("covariance", "diag"),
            t0=t0, state=state, logged=logged,
        )  # fmt: skip
        new = {"W": tr.W, "theta": tr.theta, "A": tr.A, "S": tr.cumulative_margin,
               "E": tr.exploration_sum, "n_updates": tr.n_updates}  # fmt: skip
        return tr.played, tr.propensities, new

    return run, lambda s: {"coef_": s["W"], "theta_": s["theta"]}


def _logged_pnewtron(params: dict, k: int):
    """The logged-feedback adapter of PNewtron (see ``_reference_logged``)."""
    from _reference import resolved_exploration

    # the rule the learner plays (the references compute it with its NumPy twin)
    rule = (
        resolved_exploration("PNewtron", params, k) if "exploration" in params else None
    )

    def run(X, U, t0, state, logged):
        tr = pnewtron(
            X, np.zeros(X.shape[0], int), U, k, exploration=rule,
            **{p: params[p] for p in ("scale", "beta", "D") if p in params},
            t0=t0, state=state, logged=logged,
        )  # fmt: skip
        new = {"W": tr.W, "U": tr.U, "b": tr.b, "A": tr.A, "ns": tr.norm_state}
        return tr.played, tr.propensities, new

    return run, lambda s: {
        "coef_": s["W"], "coef_unscaled_": s["U"], "b_": s["b"],
        "A_diag_": s["A"], "norm_state_": s["ns"],
    }  # fmt: skip


LOGGED_ADAPTERS = {
    "SOBA": _logged_soba,
    "PNewtron": _logged_pnewtron,
}
