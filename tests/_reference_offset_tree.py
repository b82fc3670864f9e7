"""Pure-NumPy reference of the Realizable Offset Tree with PA node classifiers.

Written from the algorithm as documented in ``docs/algorithms.md`` (Chen et al.
2009's baseline; Beygelzimer & Langford 2009), independently of the estimator's
code, with the conventions of ``_reference.py``: ``X`` dense or CSR, ``y``
label codes, ``U`` the uniforms ``(n, 2)``, every margin summed sequentially
over the row's stored entries. Every node margin is computed at the start of a
round (the learner evaluates only the nodes it needs; a node is changed at most
once per round, after its margin was read, so the values are the same).

Round by round:

1. Node margins ``f_n = w_n . x``; path margin of class ``l``:
   ``s_l = min over the nodes n on its path of sigma_{n,l} f_n`` (``sigma = +1``
   if ``l`` is on ``n``'s right side).
2. Greedy label: the shared tie rule on ``s`` (``greedy_label``, ``u2``).
3. Policy ``p = (1 - gamma) e_g + gamma / k``; action by inverse CDF on ``u1``.
4. Update: from the played leaf ``a`` upwards, label ``z = sigma`` if the reward
   ``r > 1/2`` else ``-sigma``; ``omega = |r - 1/2| / p(a)``; PA step with slack
   penalty ``C omega``; stop after the first node with ``sigma f_n < 0``.
5. Logged propensity: the marginal over the tied greedy labels.
"""

from __future__ import annotations

import numpy as np
from _entry import Entry
from _reference import (
    _add,
    _row,
    epsilon_greedy,
    greedy_label,
    logged_round,
    marginal_propensity,
    maximisers,
    sample,
    scores,
)
from _reference_ova import OVATrace, _outputs, pa_tau

from skbandit import OffsetTree
from skbandit.exploration import EpsilonGreedy


def tree(k: int) -> list[tuple[int, int, int]]:
    """Nodes ``(lo, mid, hi)`` in preorder; a node of m classes gives its left
    child the first ceil(m / 2)."""
    out = []
    todo = [(0, k)]
    while todo:
        lo, hi = todo.pop()
        mid = lo + -(-(hi - lo) // 2)
        out.append((lo, mid, hi))
        # preorder: the left subtree first, so it is pushed last
        if hi - mid > 1:
            todo.append((mid, hi))
        if mid - lo > 1:
            todo.append((lo, mid))
    return out


def path(nodes, leaf: int) -> list[tuple[int, float]]:
    """``(node, sigma)`` from the root down to ``leaf``."""
    return [
        (n, 1.0 if leaf >= mid else -1.0)
        for n, (lo, mid, hi) in enumerate(nodes)
        if lo <= leaf < hi
    ]


def path_margins(nodes, f: np.ndarray, k: int) -> np.ndarray:
    return np.array(
        [min(sig * f[n] for n, sig in path(nodes, leaf)) for leaf in range(k)]
    )


def offset_tree(
    X,
    y,
    U,
    k: int,
    *,
    update: str,
    C: float,
    gamma: float,
    W0: np.ndarray | None = None,
    logged=None,
) -> OVATrace:
    """``logged=(actions, rewards, propensities)``: learn the logged rounds
    instead of playing (``logged_round``; the update's probability is p_g(a) on
    the learner's own round, else the logged propensity)."""
    n, d = X.shape
    nodes = tree(k)
    W = np.zeros((k - 1, d)) if W0 is None else np.array(W0, dtype=np.float64)
    played, greedy, rewards, props = _outputs(n)
    for t in range(n):
        cols, vals = _row(X, t)
        f = scores(W, cols, vals)
        s = path_margins(nodes, f, k)
        g = greedy_label(s, U[t, 1])
        p = epsilon_greedy(k, g, gamma)
        a = sample(p, U[t, 0])
        marginal = marginal_propensity(
            lambda c: epsilon_greedy(k, c, gamma), maximisers(s), a
        )
        if logged is None:
            r = 1.0 if a == y[t] else 0.0  # the only use of the label
            prob = p[a]
        else:
            a, r, prob = logged_round(logged, t, a, p[a], marginal)
            marginal = float(logged[2][t])
        omega = abs(r - 0.5) / prob
        sq = np.cumsum(vals * vals)[-1] if len(vals) else 0.0
        for node, sig in reversed(path(nodes, a)):
            z = sig if r > 0.5 else -sig
            loss = 1.0 - z * f[node]
            if loss > 0.0 and sq != 0.0:
                tau = pa_tau(update, C * omega, loss, sq)
                _add(W, node, cols, (tau * z) * vals)
            if sig * f[node] < 0.0:
                break
        props[t] = marginal
        played[t], greedy[t], rewards[t] = a, g, r
    return OVATrace({"node_coef_": W}, played, greedy, rewards, props)


# --------------------------------------------------------------------------------------
# The shared test suite's declaration of this module's learners (discovered by
# ``_registry.py``; see docs/adding_a_learner.md): the registry entries and the
# logged-feedback adapters of ``_reference_logged.delayed_schedule``.

# The Realizable Offset Tree baseline (Chen et al. 2009), epsilon-greedy. C = 0.1:
# the PA-I cap C * omega then binds on exploration rounds (the importance weight
# matters), and the learner learns the digits (at C = 1 it stays near 0.35-0.45)
ENTRIES: list[Entry] = [
    Entry(
        OffsetTree,
        params={"update": "pa1", "C": 0.1, "exploration": EpsilonGreedy(0.2)},
        invalid_params=(
            ({"update": "pa3"}, "update"),
            ({"C": 0}, "'C' parameter"),
            ({"exploration": EpsilonGreedy(-0.1)}, "epsilon"),
            ({"exploration": EpsilonGreedy(1.5)}, "epsilon"),
            ({"exploration": "softmax"}, "read the scores"),
            ({"exploration": 0.2}, "exploration"),
        ),
        valid_edge_params=(
            {"exploration": EpsilonGreedy(0.0)},
            {"exploration": EpsilonGreedy(1.0)},
            {"exploration": "greedy"},
            {"update": "pa"},
            {"update": "pa2", "C": 1e-6},
        ),
        epsilon_greedy=True,
    ),
]


def _logged_offset_tree(params: dict, k: int):
    """The logged-feedback adapter of OffsetTree (see ``_reference_logged``)."""
    from _reference import resolved_exploration

    import skbandit

    # the estimator's defaults, wherever params leaves a value out
    defaults = skbandit.OffsetTree().get_params()
    # its rule is epsilon-greedy or greedy (epsilon 0)
    tree_rule = resolved_exploration("OffsetTree", params, k)
    tree_gamma = float(tree_rule.get_params().get("epsilon", 0.0))

    def run(X, U, t0, state, logged):
        tr = offset_tree(
            X, np.zeros(X.shape[0], int), U, k,
            update=params.get("update", defaults["update"]),
            C=params.get("C", defaults["C"]),
            gamma=tree_gamma,
            W0=state, logged=logged,
        )  # fmt: skip
        return tr.played, tr.propensities, tr.state["node_coef_"]

    return run, lambda W: {"node_coef_": W}


LOGGED_ADAPTERS = {
    "OffsetTree": _logged_offset_tree,
}
