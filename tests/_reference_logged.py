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
    explore_round,
    scores,
)

from skbandit.exploration import EpsilonGreedy


def _rule(gamma):
    """The exploration rule: a resolved rule object, or the Banditron's
    epsilon-greedy rate ``gamma``."""
    return gamma if hasattr(gamma, "distribution") else EpsilonGreedy(float(gamma))


def banditron_act(W, x_cols, x_vals, u1, u2, k, gamma, t=1):
    """(action b, greedy g, p_g, marginal P(b)) of round ``t``; ``gamma``: the
    epsilon-greedy rate or an exploration rule (its NumPy twin)."""
    rule = _rule(gamma)
    return explore_round(rule, scores(W, x_cols, x_vals), t, u1, u2)


def banditron_serve(X, U, W, k, gamma, t0=0):
    """Actions and logged propensities for the rows of X (rounds ``t0 + 1,
    ...``), pairs ``U``."""
    n = X.shape[0]
    actions = np.empty(n, dtype=np.int64)
    props = np.empty(n, dtype=np.float64)
    for i in range(n):
        cols, vals = _row(X, i)
        b, _, _, marginal = banditron_act(
            W, cols, vals, U[i, 0], U[i, 1], k, gamma, t0 + i + 1
        )
        actions[i], props[i] = b, marginal
    return actions, props


def banditron_learn(X, actions, rewards, props, U, W, k, gamma, t0=0):
    """Learn logged rounds in place; returns the 0/1 'own round' flags."""
    own = np.zeros(X.shape[0], dtype=np.int8)
    for i in range(X.shape[0]):
        cols, vals = _row(X, i)
        b, g, p, marginal = banditron_act(
            W, cols, vals, U[i, 0], U[i, 1], k, gamma, t0 + i + 1
        )
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
                X[lo:hi], U[lo:hi], W, k, gamma, lo
            )
            served = hi
        if j >= lag:
            lo, hi = starts[j - lag], min(starts[j - lag] + batch, n)
            rewards = (actions[lo:hi] == y[lo:hi]).astype(float)
            banditron_learn(
                X[lo:hi], actions[lo:hi], rewards, props[lo:hi], U[lo:hi], W, k,
                gamma, lo,
            )  # fmt: skip
            learned = hi
    assert served == learned == n
    return W, actions, props


# --------------------------------------------------------------------------------------
# Every bandit learner of the registry: the same schedule over its NumPy reference.
#
# An adapter (declared in the learner's reference module, ``LOGGED_ADAPTERS``)
# wraps a learner's reference as ``run(X, U, t0, state, logged)`` ->
# ``(played, propensities, new_state)``; ``state=None`` is a fresh learner and
# ``logged=None`` simulates (the label is then never read: serving a row is the
# first round of a run on that row from a copy of the state, whose update is
# discarded). ``final(state)`` gives the arrays to compare with the estimator's
# attributes of the same names.


def _adapter(name: str, params: dict, k: int):
    """``(run, final)`` of the learner ``name``: its reference module's adapter
    (``LOGGED_ADAPTERS``, discovered by ``_registry.py``)."""
    from _registry import LOGGED_ADAPTERS

    if name not in LOGGED_ADAPTERS:
        raise KeyError(f"no NumPy reference adapter for {name}")
    return LOGGED_ADAPTERS[name](params, k)


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
