"""Pure-NumPy reference of learning from logged feedback (the Banditron).

Written from the rules of ``docs/logged.md``, with the helpers of
``_reference.py`` (scores, tie-broken greedy label, inverse-CDF sampling,
marginal propensity):

- Serving (``sample_actions``) reads the uniform pairs ahead: the rows served
  while ``pending`` earlier rows wait for their feedback get the pairs of the
  rounds ``t + pending + 1, ...`` of the generator's stream, where ``t`` rounds
  have been learned; nothing else changes.
- Learning a logged round ``(x, a, r, q)`` at round ``t`` takes pair ``t`` of the
  stream: ``g`` is the tie-broken greedy label (``u2``), ``b`` the action the
  learner would draw (``u1``) and ``P(b)`` its marginal probability. The update
  uses ``p_g(b)`` when ``a == b`` and ``q == P(b)`` (the learner's own round),
  else the logged ``q``: Banditron ``w_g -= x``; if ``r == 1``, ``w_a += x / prob``.
"""

from __future__ import annotations

import numpy as np
from _reference import (
    _add,
    _row,
    _sub,
    epsilon_greedy,
    greedy_label,
    marginal_propensity,
    maximisers,
    sample,
    scores,
)

import skbandit


def banditron_act(W, x_cols, x_vals, u1, u2, k, gamma):
    """(action b, greedy g, p_g, marginal P(b)) of one round."""
    s = scores(W, x_cols, x_vals)
    g = greedy_label(s, u2)
    p = epsilon_greedy(k, g, gamma)
    b = sample(p, u1)
    marginal = marginal_propensity(
        lambda c: epsilon_greedy(k, c, gamma), maximisers(s), b
    )
    return b, g, p, marginal


def banditron_serve(X, U, W, k, gamma):
    """Actions and logged propensities for the rows of X, pairs ``U``."""
    n = X.shape[0]
    actions = np.empty(n, dtype=np.int64)
    props = np.empty(n, dtype=np.float64)
    for i in range(n):
        cols, vals = _row(X, i)
        b, _, _, marginal = banditron_act(W, cols, vals, U[i, 0], U[i, 1], k, gamma)
        actions[i], props[i] = b, marginal
    return actions, props


def banditron_learn(X, actions, rewards, props, U, W, k, gamma):
    """Learn logged rounds in place; returns the 0/1 'own round' flags."""
    own = np.zeros(X.shape[0], dtype=np.int8)
    for i in range(X.shape[0]):
        cols, vals = _row(X, i)
        b, g, p, marginal = banditron_act(W, cols, vals, U[i, 0], U[i, 1], k, gamma)
        a = int(actions[i])
        if a == b and props[i] == marginal:
            prob, own[i] = p[b], 1
        else:
            prob = props[i]
        _sub(W, g, cols, vals)
        if rewards[i] == 1:
            _add(W, a, cols, vals / prob)
    return own


def banditron_delayed(X, y, k, *, gamma, seed, batch, lag):
    """The delayed-feedback schedule: rows in batches of ``batch``; batch ``j`` is
    served once batches ``< j - lag`` have been learned, and learned after batch
    ``j + lag`` was served (``lag = 0``: serve a batch, then learn it).

    Returns ``(W, actions, propensities)``.
    """
    n, d = X.shape
    U = np.random.default_rng(seed).random((n, 2))  # pair t = round t + 1
    W = np.zeros((k, d))
    starts = list(range(0, n, batch))
    actions = np.empty(n, dtype=np.int64)
    props = np.empty(n, dtype=np.float64)
    served = learned = 0
    for j in range(len(starts) + lag):
        if j < len(starts):
            lo, hi = starts[j], min(starts[j] + batch, n)
            actions[lo:hi], props[lo:hi] = banditron_serve(
                X[lo:hi], U[lo:hi], W, k, gamma
            )
            served = hi
        if j >= lag:
            lo, hi = starts[j - lag], min(starts[j - lag] + batch, n)
            rewards = (actions[lo:hi] == y[lo:hi]).astype(float)
            banditron_learn(
                X[lo:hi], actions[lo:hi], rewards, props[lo:hi], U[lo:hi], W, k, gamma
            )
            learned = hi
    assert served == learned == n
    return W, actions, props


# --------------------------------------------------------------------------------------
# Every bandit learner of the registry: the same schedule over its NumPy reference.
#
# An adapter wraps a learner's reference as ``run(X, U, t0, state, logged)`` ->
# ``(played, propensities, new_state)``; ``state=None`` is a fresh learner and
# ``logged=None`` simulates (the label is then never read: serving a row is the
# first round of a run on that row from a copy of the state, whose update is
# discarded). ``final(state)`` gives the arrays to compare with the estimator's
# attributes of the same names.


def _adapter(name: str, params: dict, k: int):
    import _reference_gaptron as ref_g
    import _reference_ova as ref_ova
    import _reference_soba as ref_s
    from _reference import banditron

    if name == "Banditron":

        def run(X, U, t0, state, logged):
            if logged is None:
                tr = banditron(
                    X, np.zeros(X.shape[0], int), U, k, gamma=params["gamma"], W0=state
                )
                return tr.played, tr.propensities, tr.W
            W = np.zeros((k, X.shape[1])) if state is None else state.copy()
            banditron_learn(X, *logged, U, W, k, params["gamma"])
            return None, None, W

        return run, lambda W: {"coef_": W}
    if name == "SOBA":

        def run(X, U, t0, state, logged):
            tr = ref_s.soba(
                X, np.zeros(X.shape[0], int), U, k, gamma=params["gamma"],
                a=params.get("a", 1.0), covariance=params.get("covariance", "diag"),
                t0=t0, state=state, logged=logged,
            )  # fmt: skip
            new = {"W": tr.W, "theta": tr.theta, "A": tr.A, "S": tr.cumulative_margin,
                   "E": tr.exploration_sum, "n_updates": tr.n_updates}  # fmt: skip
            return tr.played, tr.propensities, new

        return run, lambda s: {"coef_": s["W"], "theta_": s["theta"]}
    if name == "PNewtron":

        def run(X, U, t0, state, logged):
            tr = ref_s.pnewtron(
                X, np.zeros(X.shape[0], int), U, k, gamma=params["gamma"],
                **{p: params[p] for p in ("alpha", "beta", "D") if p in params},
                state=state, logged=logged,
            )  # fmt: skip
            new = {"W": tr.W, "U": tr.U, "b": tr.b, "A": tr.A, "ns": tr.norm_state}
            return tr.played, tr.propensities, new

        return run, lambda s: {
            "coef_": s["W"], "coef_unscaled_": s["U"], "b_": s["b"],
            "A_diag_": s["A"], "norm_state_": s["ns"],
        }  # fmt: skip
    if name == "Gaptron":
        gamma, eta, adagrad = ref_g.resolve(
            params["loss"], params["feedback"], k,
            **{p: params[p]
               for p in ("gamma", "learning_rate", "x_norm_bound", "n_rounds")
               if p in params},
        )  # fmt: skip

        def run(X, U, t0, state, logged):
            W0, G0 = (None, 0.0) if state is None else state
            tr = ref_g.gaptron(
                X, np.zeros(X.shape[0], int), U, k, loss=params["loss"],
                feedback=params["feedback"], gamma=gamma, eta=eta, adagrad=adagrad,
                x_norm_bound=float(params.get("x_norm_bound", 1.0)), W0=W0, G0=G0,
                logged=logged,
            )  # fmt: skip
            return tr.played, tr.propensities, (tr.W, tr.grad_sq_sum)

        return run, lambda s: {"coef_": s[0], "grad_sq_sum_": s[1]}
    if name == "ConservativeOneVsAll":

        def run(X, U, t0, state, logged):
            tr = ref_ova.conservative_ova(
                X, np.zeros(X.shape[0], int), U, k, update=params.get("update", "pa"),
                C=params.get("C", 1.0), W0=state, logged=logged,
            )  # fmt: skip
            return tr.played, tr.propensities, tr.state["coef_"]

        return run, lambda W: {"coef_": W}
    if name == "SeparableOneVsAll":
        update = params.get("update", "paper")
        if params.get("kernel") is None:

            def run(X, U, t0, state, logged):
                tr = ref_ova.separable_ova(
                    X, np.zeros(X.shape[0], int), U, k, update=update, W0=state,
                    logged=logged,
                )  # fmt: skip
                return tr.played, tr.propensities, tr.state["coef_"]

            return run, lambda W: {"coef_": W}

        def run(X, U, t0, state, logged):
            tr = ref_ova.separable_ova_rational(
                X, np.zeros(X.shape[0], int), U, k, update=update,
                budget=params.get("budget"),
                project=params.get("large_norm") == "project", state0=state,
                logged=logged,
            )  # fmt: skip
            return tr.played, tr.propensities, tr.state

        return run, lambda s: dict(s)
    if name == "OffsetTree":
        import _reference_offset_tree as ref_tree

        # the estimator's defaults, wherever params leaves a value out
        defaults = skbandit.OffsetTree().get_params()

        def run(X, U, t0, state, logged):
            tr = ref_tree.offset_tree(
                X, np.zeros(X.shape[0], int), U, k,
                update=params.get("update", defaults["update"]),
                C=params.get("C", defaults["C"]),
                gamma=params.get("exploration", defaults["exploration"]),
                W0=state, logged=logged,
            )  # fmt: skip
            return tr.played, tr.propensities, tr.state["node_coef_"]

        return run, lambda W: {"node_coef_": W}
    if name == "SquareCB":
        import _reference_squarecb as ref_sq

        def run(X, U, t0, state, logged):
            tr = ref_sq.squarecb(
                X, np.zeros(X.shape[0], int), U, k, t0=t0, state=state,
                logged=logged, **params,
            )  # fmt: skip
            return tr.played, tr.propensities, tr.state

        return run, lambda s: dict(s)
    if name == "OnlineSelector":
        import _reference_selector as ref_sel

        from skbandit import OnlineSelector
        from skbandit.multiclass._selector import default_candidates

        p = {**OnlineSelector().get_params(), **params}  # the estimator's defaults
        window = p["window"]

        def run(X, U, t0, state, logged):
            if state is None:
                cands = p["candidates"] or default_candidates()
                state = ref_sel.SelectorState(
                    [ref_sel.EstimatorRef(c, np.arange(k), X.shape[1]) for c in cands],
                    mix=p["exploration"],
                    lam=1.0 if window is None else 1.0 - 1.0 / window,
                    L=float(-np.log1p(-p["confidence"])),
                    floor=p["eliminated_share"],
                    decay=p["exploration_decay"],
                    mix_min=min(p["min_exploration"], p["exploration"]),
                )
            if logged is None:  # serve the first row (learn=False changes nothing)
                a, q = ref_sel.selector_round(state, X, 0, t0 + 1, *U[0], learn=False)
                return np.array([a]), np.array([q]), state
            for i in range(X.shape[0]):
                ref_sel.selector_round(
                    state, X, i, t0 + i + 1, *U[i],
                    logged=(logged[0][i], logged[1][i], logged[2][i]),
                )  # fmt: skip
            return None, None, state

        return run, lambda st: {
            "ips_sums_": st.S,
            "ips_cross_": st.G,
            "ips_range_": st.R,
            "ips_weights_": st.w,
            "leader_state_": np.array([st.lead, st.switches]),
            "mix_shares_": st.beta,
        }
    raise KeyError(f"no NumPy reference adapter for {name}")


def delayed_schedule(name, params, X, y, k, *, seed, batch, lag):
    """The delayed-feedback schedule of ``banditron_delayed`` over the reference
    of any bandit learner: returns ``(state arrays, actions, propensities)``."""
    run, final = _adapter(name, params, k)
    n = X.shape[0]
    U = np.random.default_rng(seed).random((n, 2))
    starts = list(range(0, n, batch))
    actions = np.empty(n, dtype=np.int64)
    props = np.empty(n, dtype=np.float64)
    state = None
    for j in range(len(starts) + lag):
        if j < len(starts):
            for i in range(starts[j], min(starts[j] + batch, n)):
                played, p, _ = run(X[i : i + 1], U[i : i + 1], i, state, None)
                actions[i], props[i] = played[0], p[0]
        if j >= lag:
            lo = starts[j - lag]
            hi = min(lo + batch, n)
            rewards = (actions[lo:hi] == y[lo:hi]).astype(float)
            logged = (actions[lo:hi], rewards, props[lo:hi])
            _, _, state = run(X[lo:hi], U[lo:hi], lo, state, logged)
    return final(state), actions, props
