"""Pure-NumPy references of the one-vs-all learners, written from the papers.

- Conservative one-vs-all with Passive-Aggressive learners (Chen et al. 2009,
  Algorithms 1-2; PA steps of Crammer et al. 2006).
- One-vs-all for the separable case (Beygelzimer et al. 2019), with linear or
  rational-kernel Perceptrons.

Same conventions as ``_reference.py``: ``X`` dense or CSR, ``y`` label codes,
``U`` the uniforms ``(n, 2)`` (``u1`` samples the action by inverse CDF, ``u2``
breaks exact argmax ties), scores summed sequentially over the row's stored
entries. The label is used only to form the reward ``1[a = y]``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from _entry import Entry
from _reference import (
    _add,
    _row,
    explore_round,
    greedy_label,
    logged_round,
    maximisers,
    sample,
    scores,
)

from skbandit import ConservativeOneVsAll, SeparableOneVsAll
from skbandit.exploration import EpsilonGreedy


class OVATrace(NamedTuple):
    state: dict
    played: np.ndarray
    greedy: np.ndarray
    rewards: np.ndarray
    propensities: np.ndarray


def _outputs(n):
    return (
        np.empty(n, dtype=np.int64),
        np.empty(n, dtype=np.int64),
        np.empty(n, dtype=np.int8),
        np.empty(n, dtype=np.float64),
    )


def pa_tau(update: str, C: float, loss: float, sq: float) -> float:
    """The PA step size (Crammer et al. 2006) for hinge loss ``loss > 0`` and
    ``sq = ||x||^2 > 0``: PA ``loss / sq``, PA-I ``min(C, loss / sq)``, PA-II
    ``loss / (sq + 1 / (2 C))``."""
    if update == "pa":
        return loss / sq
    if update == "pa1":
        return min(C, loss / sq)
    return loss / (sq + 1.0 / (2.0 * C))


def conservative_ova(
    X, y, U, k: int, *, update: str, C: float, W0: np.ndarray | None = None,
    logged=None, exploration=None, t0: int = 0,
) -> OVATrace:  # fmt: skip
    """Chen et al. (2009): play argmax (loss-based decoding), PA steps on the
    played class (wrong) or on every class (right). ``exploration``: another
    rule played instead (a resolved rule, through its NumPy twin; rounds
    ``t0 + 1, ...``); the update is the same with the played class."""
    n, d = X.shape
    W = np.zeros((k, d)) if W0 is None else np.array(W0, dtype=np.float64)
    played, greedy, rewards, props = _outputs(n)
    for t in range(n):
        cols, vals = _row(X, t)
        s = scores(W, cols, vals)
        g = greedy_label(s, U[t, 1])
        if exploration is None:
            a = g  # no exploration: p = e_g, u1 is drawn but not needed
            assert sample(np.eye(k)[g], U[t, 0]) == g
            marginal = 1.0 / len(maximisers(s))
        else:
            a, _, _, marginal = explore_round(exploration, s, t0 + t + 1, *U[t])
        if logged is None:
            reward = a == y[t]
        else:  # the update uses no probability
            a, reward, _ = logged_round(logged, t, a, 1.0, marginal)
        sq = np.cumsum(vals * vals)[-1] if len(vals) else 0.0
        if sq != 0.0:
            targets = (
                [(r, 1.0 if r == a else -1.0) for r in range(k)]
                if reward
                else [(a, -1.0)]
            )
            for r, z in targets:
                loss = 1.0 - z * s[r]
                if not loss > 0.0:
                    continue
                _add(W, r, cols, (pa_tau(update, C, loss, sq) * z) * vals)
        props[t] = marginal
        played[t], greedy[t], rewards[t] = a, g, reward
    return OVATrace({"coef_": W}, played, greedy, rewards, props)


def _separable_p(s: np.ndarray, g: int) -> np.ndarray:
    """e_g if the greedy score is >= 0, else uniform (full(k, 1 / k))."""
    k = len(s)
    if s[g] >= 0.0:
        return np.eye(k)[g]
    return np.full(k, 1.0 / k)


def _separable_targets(s, a, reward, full):
    """(class, +1 / -1) of every binary learner that errs on this round."""
    k = len(s)
    out = []
    if reward:
        if s[a] < 0.0:
            out.append((a, 1.0))
        if full:
            out += [(r, -1.0) for r in range(k) if r != a and s[r] >= 0.0]
    elif s[a] >= 0.0:
        out.append((a, -1.0))
    return sorted(out)


def separable_ova(
    X, y, U, k: int, *, update_scope: str = "played", W0: np.ndarray | None = None,
    logged=None, exploration=None, t0: int = 0,
) -> OVATrace:  # fmt: skip
    """Beygelzimer et al. (2019), linear Perceptrons: S = {i : f_i >= 0}; play the
    highest score if S is non-empty, else uniform; the played learner learns YES
    if right, NO if wrong, and steps only on its own mistake. ``exploration``:
    another rule played instead (resolved, through its NumPy twin; rounds
    ``t0 + 1, ...``)."""
    n, d = X.shape
    W = np.zeros((k, d)) if W0 is None else np.array(W0, dtype=np.float64)
    played, greedy, rewards, props = _outputs(n)
    for t in range(n):
        cols, vals = _row(X, t)
        s = scores(W, cols, vals)
        g = greedy_label(s, U[t, 1])
        if exploration is None:

            def dist(c, s=s):
                return _separable_p(s, c)

        else:

            def dist(c, s=s, r=t0 + t + 1):
                return exploration.distribution(s, r, c)

        a = sample(dist(g), U[t, 0])
        if logged is None:
            reward = a == y[t]
        else:  # the update uses no probability
            a, reward, _ = logged_round(logged, t, a, 1.0, 1.0)
        for r, z in _separable_targets(s, a, reward, update_scope == "all"):
            _add(W, r, cols, z * vals)
        G = maximisers(s)
        props[t] = sum(dist(int(c))[a] for c in G) / len(G)
        played[t], greedy[t], rewards[t] = a, g, reward
    return OVATrace({"coef_": W}, played, greedy, rewards, props)


def projection_factor(vals, project: bool) -> float:
    """1, or 1 / ||x|| for a row with ||x||^2 > 1 when projecting (sequential sum)."""
    if not project or len(vals) == 0:
        return 1.0
    sq = np.cumsum(vals * vals)[-1]
    return 1.0 / np.sqrt(sq) if sq > 1.0 else 1.0


def rational_kernel_scores(V, A, cols, vals, xscale=1.0):
    """f = sum_j A[j] / (1 - <V[j], x> xscale / 2), summed in support order, each
    dot product sequential over the row's stored entries."""
    k = A.shape[1]
    s = np.zeros(k)
    for j in range(V.shape[0]):
        prod = V[j] * vals if cols is None else V[j, cols] * vals
        dot = np.cumsum(prod)[-1] if len(prod) else 0.0
        if xscale != 1.0:
            dot = dot * xscale
        s = s + A[j] * (1.0 / (1.0 - 0.5 * dot))
    return s


def support_state(V: np.ndarray, A: np.ndarray) -> dict:
    """The learner's declared state for the support set ``V`` (dense, oldest
    first) and coefficients ``A``: ``V``'s non-zero entries in CSR form."""
    S = sp.csr_matrix(V)
    return {
        "_sv_data": S.data,
        "_sv_indices": S.indices.astype(np.int32),
        "_sv_indptr": S.indptr.astype(np.int64),
        "dual_coef_": A,
    }


def support_vectors(state: dict, d: int) -> np.ndarray:
    """The dense support set ``V`` (n_support, d) of a declared state."""
    n_support = state["_sv_indptr"].shape[0] - 1
    S = sp.csr_matrix(
        (state["_sv_data"], state["_sv_indices"], state["_sv_indptr"]),
        shape=(n_support, d),
    )
    return S.toarray()


def separable_ova_rational(
    X,
    y,
    U,
    k: int,
    *,
    update_scope: str = "played",
    budget: int | None = None,
    project: bool = False,
    state0: dict | None = None,
    logged=None,
) -> OVATrace:
    """The same learner with rational-kernel Perceptrons: a round with mistakes
    appends x to the support set with coefficient +-1 for each erring learner;
    beyond ``budget`` the oldest support vector is dropped first. ``project``:
    rows with ||x|| > 1 enter the kernel (and the support set) as x / ||x||.
    The state is the support set's non-zero entries in CSR form (``support_state``)."""
    n, d = X.shape
    if state0 is None:
        V, A = np.zeros((0, d)), np.zeros((0, k))
    else:
        V, A = support_vectors(state0, d), state0["dual_coef_"].copy()
    played, greedy, rewards, props = _outputs(n)
    for t in range(n):
        cols, vals = _row(X, t)
        f = projection_factor(vals, project)
        s = rational_kernel_scores(V, A, cols, vals, f)
        g = greedy_label(s, U[t, 1])
        a = sample(_separable_p(s, g), U[t, 0])
        if logged is None:
            reward = a == y[t]
        else:  # the update uses no probability
            a, reward, _ = logged_round(logged, t, a, 1.0, 1.0)
        targets = _separable_targets(s, a, reward, update_scope == "all")
        if targets:
            v = np.zeros(d)
            _add(v[None, :], 0, cols, vals * f)
            coef = np.zeros(k)
            for r, z in targets:
                coef[r] = z
            V, A = np.vstack([V, v]), np.vstack([A, coef])
            if budget is not None and len(V) > budget:
                V, A = V[1:], A[1:]
        G = maximisers(s)
        props[t] = sum(_separable_p(s, int(c))[a] for c in G) / len(G)
        played[t], greedy[t], rewards[t] = a, g, reward
    return OVATrace(support_state(V, A), played, greedy, rewards, props)


# --------------------------------------------------------------------------------------
# The shared test suite's declaration of this module's learners (discovered by
# ``_registry.py``; see docs/adding_a_learner.md): the registry entries and the
# logged-feedback adapters of ``_reference_logged.delayed_schedule``.

# One-vs-all learners (Chen et al. 2009; Beygelzimer et al. 2019)
ENTRIES: list[Entry] = [
    Entry(
        ConservativeOneVsAll,
        params={"update": "pa1"},
        invalid_params=(
            ({"update": "pa3"}, "update"),
            ({"C": 0}, "'C' parameter"),
            ({"C": -1.0}, "'C' parameter"),
        ),
        valid_edge_params=({"update": "pa"}, {"update": "pa2", "C": 1e-6}),
    ),
    Entry(
        SeparableOneVsAll,
        params={},
        invalid_params=(
            ({"kernel": "rbf"}, "kernel"),
            ({"update_scope": "both"}, "update_scope"),
            ({"budget": 0}, "budget"),
        ),
        valid_edge_params=({"update_scope": "all"}, {"budget": 1}),
    ),
    # the one-vs-all learners playing epsilon-greedy (their updates use the
    # played class, whatever the rule)
    Entry(
        ConservativeOneVsAll,
        params={"update": "pa1", "exploration": EpsilonGreedy(0.05)},
        variant="epsilon-greedy",
    ),
    Entry(
        SeparableOneVsAll,
        params={"exploration": EpsilonGreedy(0.05)},
        variant="epsilon-greedy",
    ),
    # the rational-kernel learner (no coef_: its state is the support set); the
    # shared streams have rows outside the unit ball, which it projects
    Entry(
        SeparableOneVsAll,
        params={"kernel": "rational", "large_norm": "project"},
        invalid_params=(
            ({"large_norm": "clip"}, "large_norm"),
            ({"budget": 0}, "budget"),
        ),
        valid_edge_params=({"update_scope": "all"}, {"budget": 1}),
        variant="rational",
        check_params={"kernel": "rational", "large_norm": "project"},
    ),
]


def _logged_conservative_ova(params: dict, k: int):
    """The logged-feedback adapter of ConservativeOneVsAll (``_reference_logged``)."""
    from _reference import resolved_exploration

    # the rule the learner plays (the references compute it with its NumPy twin)
    rule = (
        resolved_exploration("ConservativeOneVsAll", params, k)
        if "exploration" in params
        else None
    )

    def run(X, U, t0, state, logged):
        tr = conservative_ova(
            X, np.zeros(X.shape[0], int), U, k, update=params.get("update", "pa"),
            C=params.get("C", 1.0), W0=state, logged=logged, exploration=rule,
            t0=t0,
        )  # fmt: skip
        return tr.played, tr.propensities, tr.state["coef_"]

    return run, lambda W: {"coef_": W}


def _logged_separable_ova(params: dict, k: int):
    """The logged-feedback adapter of SeparableOneVsAll (see ``_reference_logged``)."""
    from _reference import resolved_exploration

    # the rule the learner plays (the references compute it with its NumPy twin)
    rule = (
        resolved_exploration("SeparableOneVsAll", params, k)
        if "exploration" in params
        else None
    )
    scope = params.get("update_scope", "played")
    if params.get("kernel") is None:

        def run(X, U, t0, state, logged):
            tr = separable_ova(
                X, np.zeros(X.shape[0], int), U, k, update_scope=scope, W0=state,
                logged=logged, exploration=rule, t0=t0,
            )  # fmt: skip
            return tr.played, tr.propensities, tr.state["coef_"]

        return run, lambda W: {"coef_": W}

    def run(X, U, t0, state, logged):
        tr = separable_ova_rational(
            X, np.zeros(X.shape[0], int), U, k, update_scope=scope,
            budget=params.get("budget"),
            project=params.get("large_norm") == "project", state0=state,
            logged=logged,
        )  # fmt: skip
        return tr.played, tr.propensities, tr.state

    return run, lambda s: dict(s)


LOGGED_ADAPTERS = {
    "ConservativeOneVsAll": _logged_conservative_ova,
    "SeparableOneVsAll": _logged_separable_ova,
}
