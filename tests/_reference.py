"""Pure-NumPy reference implementations of the learners, written from the papers.

- Multiclass Perceptron (Crammer & Singer 2003): full information.
- Banditron (Kakade, Shalev-Shwartz & Tewari, ICML 2008).

Every function takes

- ``X``: a dense 2-D float64 ndarray or a scipy CSR matrix (duplicate column
  entries in a row are allowed and count as their sum, as in the dense matrix:
  ``_row`` hands each row over as the estimators' validation hands it to the
  kernels, columns sorted and each stored once),
- ``y``: integer label codes in ``0..k-1`` (index into the sorted ``classes_``),
- ``U``: the uniforms, shape ``(n, 2)``; round ``t`` uses ``u1 = U[t, 0]`` (sampling)
  and ``u2 = U[t, 1]`` (argmax tie breaking),

and returns a ``Trace`` ``(W, played, greedy, rewards, propensities)``.

The rules these references follow, round by round:

1. Scores ``s = W x``, summed sequentially over the entries of the canonical
   row in column order, ``np.cumsum(W[:, cols] * vals, axis=1)[:, -1]``, so the actions
   agree with the compiled kernel bit for bit.
2. Greedy label: with the ``m`` exact maximisers ``G`` of ``s`` in increasing class
   order, the ``min(int(u2 * m), m - 1)``-th of them.
3. Distribution given the greedy label ``g``: Banditron ``p_g = (1 - gamma) e_g +
   (gamma / k) 1`` (computed as ``full(k, gamma / k)``, then ``+= 1 - gamma`` at
   ``g``); Perceptron ``p_g = e_g`` (it plays ``g``, ``u1`` is drawn but unused).
4. Sampling by inverse CDF on ``u1`` over the classes ``0..k-1`` in order: the
   first ``r`` with ``u1 < cumsum(p)[r]``; if rounding leaves no such ``r``, the
   last class with positive probability.
5. Update with the paper's probability ``p_g(a)`` of the played action ``a`` under
   the tie-broken greedy ``g``: Banditron ``w_g -= x`` every round and, if
   ``a = y``, ``w_a += x / p_g(a)``; Perceptron, if ``g != y``, ``w_y += x`` and
   ``w_g -= x``. Row updates add each stored entry in turn (``np.add.at``), so a
   column stored twice receives both values. The Banditron also adds the update
   of its global round ``s`` (``t0 + 1`` for the first row of the call) times
   ``s - 1`` to ``A`` (``A[g] += (-(s - 1)) * x``; ``A[a] += ((s - 1) / p) * x``),
   so that its averaged weights are ``W - A / s``.
6. Logged propensity: the *marginal* probability of the played action under the
   policy, tie-breaking included, ``(1/m) * sum_{g in G} p_g(a)``. For the
   Banditron that is ``gamma/k + (1 - gamma) * 1[a in G] / m``; for the Perceptron
   ``1/m``. Without ties (``m = 1``) it is ``p_g(a)``.
7. The label is used only to form the reward ``1[a = y]`` (and, for the
   full-information Perceptron, in its update).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from _entry import Entry

from skbandit import Banditron, MulticlassPerceptron
from skbandit.exploration import EpsilonGreedy, GapMap, Greedy


class Trace(NamedTuple):
    W: np.ndarray
    played: np.ndarray
    greedy: np.ndarray
    rewards: np.ndarray
    propensities: np.ndarray
    # the Banditron's accumulator of the averaged iterate (None for the others)
    A: np.ndarray | None = None

    @property
    def state(self) -> dict[str, np.ndarray]:
        """The learner's declared state (``_state_attrs``) after the replay."""
        return _state(self.W, self.A)


def _state(W, A) -> dict[str, np.ndarray]:
    return {"coef_": W} if A is None else {"coef_": W, "_average_acc": A}


def canonical(X):
    """X as the estimators' validation hands it to the kernels: a CSR copy with
    duplicate columns summed and indices sorted (dense X unchanged)."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, copy=True)
        X.sum_duplicates()
    return X


def _row(X, i: int) -> tuple[np.ndarray | None, np.ndarray]:
    """(column indices or None for "all columns", values) of row ``i``.

    A CSR row is returned canonical, as the estimators' validation hands it to
    the kernels: columns in increasing order, a column stored several times
    once with the sum of its values (exact for the tests' duplicated entries,
    halves and opposite pairs, whatever the order of the sum)."""
    if sp.issparse(X):
        start, end = X.indptr[i], X.indptr[i + 1]
        cols, vals = X.indices[start:end], X.data[start:end]
        if cols.size > 1 and not np.all(np.diff(cols) > 0):
            order = np.argsort(cols, kind="stable")
            cols, vals = cols[order], vals[order]
            cols, first = np.unique(cols, return_index=True)
            vals = np.add.reduceat(vals, first)
        return cols, vals
    return None, X[i]


def scores(W: np.ndarray, cols: np.ndarray | None, vals: np.ndarray) -> np.ndarray:
    """s_r = ((W[r, j0] * x0 + W[r, j1] * x1) + ...), summed sequentially."""
    prod = W * vals if cols is None else W[:, cols] * vals
    if prod.shape[1] == 0:
        return np.zeros(W.shape[0])
    return np.cumsum(prod, axis=1)[:, -1]


def maximisers(s: np.ndarray) -> np.ndarray:
    """The exact maximisers of ``s``, in increasing class order."""
    return np.flatnonzero(s == np.max(s))


def greedy_label(s: np.ndarray, u2: float) -> int:
    """First-order greedy label; ties broken with u2 among the exact maximisers."""
    M = maximisers(s)
    m = len(M)
    return int(M[min(int(u2 * m), m - 1)])


def resolved_exploration(name: str, params: dict, k: int):
    """The rule a learner ``name`` with ``params`` plays with ``k`` classes:
    its ``exploration`` parameter with every ``None`` parameter resolved (the
    references compute its distribution with the rule's NumPy twin)."""
    import skbandit

    est = getattr(skbandit, name)(**params)
    est.classes_ = np.arange(k)
    return est._resolve_exploration()


def explore_round(rule, s: np.ndarray, t: int, u1: float, u2: float):
    """One round of the exploration ``rule`` (its NumPy twin) on the scores ``s``
    at round ``t``: ``(action, greedy label, the distribution under that greedy
    label, the action's marginal propensity over the tied greedy labels)``."""
    g = greedy_label(s, u2)

    def dist(c):
        return rule.distribution(s, t, c)

    p = dist(g)
    a = sample(p, u1)
    return a, g, p, marginal_propensity(dist, maximisers(s), a)


def epsilon_greedy(k: int, greedy: int, gamma: float) -> np.ndarray:
    """p = full(k, gamma / k); p[greedy] += 1 - gamma (exactly these float ops)."""
    p = np.full(k, gamma / k)
    p[greedy] += 1 - gamma
    return p


def sample(p: np.ndarray, u1: float) -> int:
    """Inverse CDF: the first r with u1 < cumsum(p)[r]; if rounding leaves none,
    the last class with positive probability."""
    c = np.cumsum(p)
    hits = np.flatnonzero(u1 < c)
    if len(hits):
        return int(hits[0])
    return int(np.flatnonzero(p > 0)[-1])


def marginal_propensity(
    dist: Callable[[int], np.ndarray], G: np.ndarray, action: int
) -> float:
    """(1/m) * sum over the m greedy candidates g in G of p_g(action)."""
    return float(sum(dist(int(g))[action] for g in G) / len(G))


def _add(W: np.ndarray, r: int, cols: np.ndarray | None, vals: np.ndarray) -> None:
    if cols is None:
        W[r] += vals
    else:
        # np.add.at: a column stored twice in the row receives both values
        # (W[r, cols] += vals would keep only the last one).
        np.add.at(W[r], cols, vals)


def _sub(W: np.ndarray, r: int, cols: np.ndarray | None, vals: np.ndarray) -> None:
    if cols is None:
        W[r] -= vals
    else:
        np.subtract.at(W[r], cols, vals)


def _start(X, y, U, k, W0) -> tuple[np.ndarray, int]:
    n, d = X.shape
    assert U.shape == (n, 2)
    assert len(y) == n
    W = np.zeros((k, d)) if W0 is None else np.array(W0, dtype=np.float64)
    return W, n


def banditron(
    X,
    y,
    U: np.ndarray,
    k: int,
    *,
    exploration,
    W0: np.ndarray | None = None,
    A0: np.ndarray | None = None,
    t0: int = 0,
) -> Trace:
    """Banditron (Kakade, Shalev-Shwartz & Tewari 2008), with the accumulator
    ``A`` of its averaged iterate; ``t0`` rounds were played before the call.
    ``exploration``: the rule played (a resolved ``skbandit.exploration``
    object, through its NumPy twin; the paper's is ``EpsilonGreedy(gamma)``)."""
    W, n = _start(X, y, U, k, W0)
    A = np.zeros_like(W) if A0 is None else np.array(A0, dtype=np.float64)
    played = np.empty(n, dtype=np.int64)
    greedy = np.empty(n, dtype=np.int64)
    rewards = np.empty(n, dtype=np.int8)
    props = np.empty(n, dtype=np.float64)
    for t in range(n):
        cols, vals = _row(X, t)
        s = scores(W, cols, vals)
        # at the global round index t0 + t + 1
        a, g, p, props[t] = explore_round(exploration, s, t0 + t + 1, *U[t])
        reward = a == y[t]  # the only place the label is used
        before = float(t0 + t)  # (global round index) - 1
        _sub(W, g, cols, vals)
        _add(A, g, cols, (-before) * vals)
        if reward:
            _add(W, a, cols, vals / p[a])  # the paper's p_g(a), g tie-broken
            _add(A, a, cols, (before / p[a]) * vals)
        played[t], greedy[t], rewards[t] = a, g, reward
    return Trace(W, played, greedy, rewards, props, A)


def perceptron(X, y, U: np.ndarray, k: int, *, W0: np.ndarray | None = None) -> Trace:
    """Multiclass Perceptron (Crammer & Singer 2003), full information."""
    W, n = _start(X, y, U, k, W0)
    played = np.empty(n, dtype=np.int64)
    rewards = np.empty(n, dtype=np.int8)
    props = np.empty(n, dtype=np.float64)
    for t in range(n):
        cols, vals = _row(X, t)
        s = scores(W, cols, vals)
        g = greedy_label(s, U[t, 1])  # u1 = U[t, 0] is drawn but ignored
        if g != y[t]:
            _add(W, int(y[t]), cols, vals)
            _sub(W, g, cols, vals)
        props[t] = marginal_propensity(lambda c: np.eye(k)[c], maximisers(s), g)
        played[t], rewards[t] = g, g == y[t]
    return Trace(W, played, played.copy(), rewards, props)


# name of the estimator class -> (reference function, names of its parameters)
REFERENCES: dict[str, tuple[Callable[..., Trace], tuple[str, ...]]] = {
    "Banditron": (banditron, ("exploration",)),
    "MulticlassPerceptron": (perceptron, ()),
}


def run_partial_fit(
    name: str,
    X,
    y,
    k: int,
    rng: np.random.Generator,
    W0=None,
    A0=None,
    t0=0,
    **params,
) -> Trace:
    """Replay one ``partial_fit(X, y)`` call: ``U = rng.random((n, 2))``; a
    learner with an averaged iterate continues from ``A0`` after ``t0`` rounds."""
    func, names = REFERENCES[name]
    U = rng.random((X.shape[0], 2))
    kwargs = {p: params[p] for p in names}
    if "exploration" in kwargs:
        kwargs["exploration"] = resolved_exploration(name, params, k)
    if name == "Banditron":
        kwargs.update(A0=A0, t0=t0)
    return func(X, y, U, k, W0=W0, **kwargs)


class FitTrace(NamedTuple):
    W: np.ndarray
    rows: np.ndarray
    played: np.ndarray
    greedy: np.ndarray
    rewards: np.ndarray
    propensities: np.ndarray
    A: np.ndarray | None = None

    @property
    def state(self) -> dict[str, np.ndarray]:
        """The learner's declared state (``_state_attrs``) after the replay."""
        return _state(self.W, self.A)


def run_fit(
    name: str,
    X,
    y,
    k: int,
    seed,
    *,
    max_iter: int,
    shuffle: bool,
    **params,
) -> FitTrace:
    """Replay ``fit``: a new generator; per epoch the row order then the uniforms."""
    X = sp.csr_matrix(X) if sp.issparse(X) else X
    rng = np.random.default_rng(seed)
    n = X.shape[0]
    W = A = None
    parts = []
    for epoch in range(max_iter):
        rows = rng.permutation(n) if shuffle else np.arange(n)
        trace = run_partial_fit(
            name, X[rows], y[rows], k, rng, W0=W, A0=A, t0=epoch * n, **params
        )
        W, A = trace.W, trace.A
        parts.append((rows, trace))
    return FitTrace(
        W,
        np.concatenate([r for r, _ in parts]),
        *(np.concatenate([tr[i] for _, tr in parts]) for i in range(1, 5)),
        A,
    )


def logged_round(logged, t: int, own: int, p_own: float, marginal_own: float):
    """``(action, reward, prob)`` of logged round ``t`` (``docs/logged.md``).

    ``logged = (actions, rewards, propensities)`` (action codes); ``own`` is the
    action the learner draws with the round's uniforms, ``p_own`` its
    probability given the tie-broken greedy label and ``marginal_own`` its
    marginal propensity. The update uses ``p_own`` when the logged round is the
    learner's own (same action, logged propensity equal to ``marginal_own``),
    else the logged propensity.
    """
    actions, rewards, props = logged
    a = int(actions[t])
    own_round = a == own and props[t] == marginal_own
    return a, float(rewards[t]), p_own if own_round else float(props[t])


# --------------------------------------------------------------------------------------
# The shared test suite's declaration of this module's learners (discovered by
# ``_registry.py``; see docs/adding_a_learner.md): the registry entries and the
# logged-feedback adapters of ``_reference_logged.delayed_schedule``.

ENTRIES: list[Entry] = [
    Entry(
        Banditron,
        params={"exploration": EpsilonGreedy(0.2)},
        invalid_params=(
            ({"exploration": EpsilonGreedy(-1)}, "epsilon"),
            ({"exploration": EpsilonGreedy(1.5)}, "epsilon"),
            ({"exploration": EpsilonGreedy(0.2, decay=-1.0)}, "decay"),
            ({"exploration": EpsilonGreedy("adaptive")}, "SOBA"),
            ({"exploration": "boltzmann"}, "exploration"),
            ({"exploration": 0.2}, "exploration"),
        ),
        valid_edge_params=(
            {"exploration": EpsilonGreedy(1)},
            {"exploration": EpsilonGreedy(1.0)},
            {"exploration": EpsilonGreedy(1e-6)},
            {"exploration": EpsilonGreedy(0.0)},
            {"exploration": EpsilonGreedy(0.5, decay=0.5, min_epsilon=0.01)},
        ),
        epsilon_greedy=True,
        # the last iterate too (predict with coef_), at a small gamma
        check_params={"average": False, "exploration": EpsilonGreedy(0.05)},
    ),
    # the Banditron with other exploration rules: its update divides by the
    # played label's probability under the rule
    Entry(
        Banditron,
        params={"exploration": "softmax"},
        variant="softmax",
    ),
    Entry(
        Banditron,
        params={"exploration": GapMap(0.1, loss="hinge")},
        variant="gap-map",
    ),
    Entry(
        MulticlassPerceptron,
        params={},
        invalid_params=(({"exploration": "epsilon_greedy"}, "exploration"),),
        valid_edge_params=({"exploration": "greedy"}, {"exploration": Greedy()}),
    ),
]


def _logged_banditron(params: dict, k: int):
    """The logged-feedback adapter of Banditron (see ``_reference_logged``)."""
    from _reference_logged import banditron_learn

    # the rule the learner plays (the references compute it with its NumPy twin)
    rule = (
        resolved_exploration("Banditron", params, k)
        if "exploration" in params
        else None
    )

    def run(X, U, t0, state, logged):
        if logged is None:
            tr = banditron(
                X, np.zeros(X.shape[0], int), U, k, exploration=rule, W0=state,
                t0=t0,
            )  # fmt: skip
            return tr.played, tr.propensities, tr.W
        W = np.zeros((k, X.shape[1])) if state is None else state.copy()
        banditron_learn(X, *logged, U, W, k, rule, t0)
        return None, None, W

    return run, lambda W: {"coef_": W}


LOGGED_ADAPTERS = {
    "Banditron": _logged_banditron,
}
