"""Pure-NumPy reference of the Bandit Passive-Aggressive learner.

Written from docs/algorithms.md ("BanditPassiveAggressive"): the Banditron's
epsilon-greedy play (Kakade et al. 2008) and a Passive-Aggressive step
(Crammer et al. 2006) along the Banditron's importance-weighted estimate
``U = x (r/q e_a - e_g)^T``. Same conventions as ``_reference.py`` (``X`` dense
or CSR, ``y`` label codes, ``U`` the uniforms ``(n, 2)``: ``u1`` samples the
action by inverse CDF, ``u2`` breaks exact argmax ties; scores summed
sequentially), and the kernel's floating-point operations in its order, so
that the estimator agrees bit for bit. The label is used only to form the
reward ``1[a = y]``.
"""

from __future__ import annotations

import numpy as np
from _entry import Entry
from _reference import (
    _add,
    _row,
    explore_round,
    logged_round,
    resolved_exploration,
    scores,
)
from _reference_offset_tree import pa_tau
from _reference_ova import OVATrace, _outputs

from skbandit import BanditPassiveAggressive
from skbandit.exploration import EpsilonGreedy


def bandit_pa_step(W, cols, vals, s, a, g, prob, reward, update, C) -> None:
    """The PA step of one round, in place: ``v = r / q``,
    ``l = 1 - (v s_a - s_g)``; skipped unless ``l > 0``; ``c = (v - 1)^2`` if
    ``a == g`` else ``v^2 + 1``; skipped if ``||x||^2 == 0`` or ``c == 0``;
    ``tau = pa_tau(update, C, l, c ||x||^2)``; then ``w_g += tau (v - 1) x``
    (``a == g``) or ``w_g += -tau x`` and, if ``r != 0``, ``w_a += tau v x``."""
    v = reward / prob
    loss = 1.0 - (v * s[a] - s[g])
    if not loss > 0.0:
        return
    sq = float(np.cumsum(vals * vals)[-1]) if len(vals) else 0.0
    c = (v - 1.0) * (v - 1.0) if a == g else v * v + 1.0
    if sq == 0.0 or c == 0.0:
        return
    tau = pa_tau(update, C, loss, c * sq)
    if a == g:
        _add(W, g, cols, (tau * (v - 1.0)) * vals)
        return
    _add(W, g, cols, (-tau) * vals)
    if reward != 0.0:
        _add(W, a, cols, (tau * v) * vals)


def bandit_pa(
    X, y, U, k: int, *, exploration, update: str, C: float, t0: int = 0,
    W0: np.ndarray | None = None, logged=None,
) -> OVATrace:  # fmt: skip
    """``exploration`` (a resolved rule, its NumPy twin) over ``W x`` at rounds
    ``t0 + 1, ...``, PA steps along the Banditron's estimate.
    ``logged = (actions, rewards, propensities)`` learns logged rounds instead
    (``docs/logged.md``: the learner's own round uses ``p_g(a)``)."""
    n, d = X.shape
    W = np.zeros((k, d)) if W0 is None else np.array(W0, dtype=np.float64)
    played, greedy, rewards, props = _outputs(n)
    for t in range(n):
        cols, vals = _row(X, t)
        s = scores(W, cols, vals)
        a, g, p, marginal = explore_round(exploration, s, t0 + t + 1, *U[t])
        if logged is None:
            prob, reward = p[a], float(a == y[t])  # the only use of the label
        else:
            a, reward, prob = logged_round(logged, t, a, p[a], marginal)
        bandit_pa_step(W, cols, vals, s, a, g, prob, reward, update, C)
        played[t], greedy[t], rewards[t], props[t] = a, g, reward, marginal
    return OVATrace({"coef_": W}, played, greedy, rewards, props)


# --------------------------------------------------------------------------------------
# The shared test suite's declaration of this module's learner (discovered by
# ``_registry.py``; see docs/adding_a_learner.md): the registry entries and the
# logged-feedback adapter of ``_reference_logged.delayed_schedule``.

ENTRIES: list[Entry] = [
    Entry(
        BanditPassiveAggressive,
        params={"exploration": EpsilonGreedy(0.2), "update": update, "C": C},
        invalid_params=(
            ({"exploration": EpsilonGreedy(-0.1)}, "epsilon"),
            ({"exploration": EpsilonGreedy(1.5)}, "epsilon"),
            ({"exploration": 0.2}, "exploration"),
            ({"update": "pa3"}, "update"),
            ({"C": 0}, "'C' parameter"),
            ({"C": -1.0}, "'C' parameter"),
        ),
        valid_edge_params=(
            {"exploration": EpsilonGreedy(1.0)},
            {"exploration": EpsilonGreedy(1e-6)},
            {"C": 1e-6},
        ),
        epsilon_greedy=True,
        variant=update,
        check_params={"update": update, "C": C} if update != "pa1" else {},
    )
    # C = 0.1 for PA-I: the cap C binds on the greedy rounds the estimate
    # scales down (r / q - 1 is small), so the capped branch is exercised
    for update, C in (("pa", 1.0), ("pa1", 0.1), ("pa2", 1.0))
]


def _logged_bandit_pa(params: dict, k: int):
    """The logged-feedback adapter of BanditPassiveAggressive
    (``_reference_logged``); the estimator's defaults fill what ``params``
    leaves out."""
    p = {**BanditPassiveAggressive().get_params(), **params}
    rule = resolved_exploration("BanditPassiveAggressive", params, k)

    def run(X, U, t0, state, logged):
        tr = bandit_pa(
            X, np.zeros(X.shape[0], int), U, k, exploration=rule,
            update=p["update"], C=p["C"], W0=state, logged=logged, t0=t0,
        )  # fmt: skip
        return tr.played, tr.propensities, tr.state["coef_"]

    return run, lambda W: {"coef_": W}


LOGGED_ADAPTERS = {"BanditPassiveAggressive": _logged_bandit_pa}
