"""Pure-NumPy reference implementations, written line by line from
``ALGORITHMS.md`` (sections 0-2) and the v0.1 SPEC.

Every function takes

- ``X``: a dense 2-D float64 ndarray or a scipy CSR matrix,
- ``y``: integer label codes in ``0..k-1`` (index into the sorted ``classes_``),
- ``U``: the uniforms, shape ``(n, 2)``; round ``t`` uses ``u1 = U[t, 0]`` (sampling)
  and ``u2 = U[t, 1]`` (argmax tie breaking),

and returns ``(W, played, greedy, rewards, propensities)``.

Scores are summed sequentially over the stored entries of the row in column order,
``np.cumsum(W[:, cols] * vals, axis=1)[:, -1]``, exactly as the SPEC prescribes, so
the actions must agree with the compiled kernel bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp


class Trace(NamedTuple):
    W: np.ndarray
    played: np.ndarray
    greedy: np.ndarray
    rewards: np.ndarray
    propensities: np.ndarray


def _row(X, i: int) -> tuple[np.ndarray | None, np.ndarray]:
    """(column indices or None for "all columns", values) of row ``i``."""
    if sp.issparse(X):
        start, end = X.indptr[i], X.indptr[i + 1]
        return X.indices[start:end], X.data[start:end]
    return None, X[i]


def scores(W: np.ndarray, cols: np.ndarray | None, vals: np.ndarray) -> np.ndarray:
    """s_r = ((W[r, j0] * x0 + W[r, j1] * x1) + ...), summed sequentially."""
    prod = W * vals if cols is None else W[:, cols] * vals
    if prod.shape[1] == 0:
        return np.zeros(W.shape[0])
    return np.cumsum(prod, axis=1)[:, -1]


def greedy_label(s: np.ndarray, u2: float) -> int:
    """First-order greedy label; ties broken with u2 among the exact maximisers."""
    M = np.flatnonzero(s == np.max(s))
    m = len(M)
    return int(M[min(int(u2 * m), m - 1)])


def epsilon_greedy(k: int, greedy: int, gamma: float) -> np.ndarray:
    """p = full(k, gamma / k); p[greedy] += 1 - gamma (exactly these float ops)."""
    p = np.full(k, gamma / k)
    p[greedy] += 1 - gamma
    return p


def sample(p: np.ndarray, u1: float) -> int:
    """Inverse CDF: first r with u1 < cumsum(p)[r]; k - 1 if there is none."""
    c = np.cumsum(p)
    hits = np.flatnonzero(u1 < c)
    return int(hits[0]) if len(hits) else len(p) - 1


def _add(W: np.ndarray, r: int, cols: np.ndarray | None, vals: np.ndarray) -> None:
    if cols is None:
        W[r] += vals
    else:
        W[r, cols] += vals


def _sub(W: np.ndarray, r: int, cols: np.ndarray | None, vals: np.ndarray) -> None:
    if cols is None:
        W[r] -= vals
    else:
        W[r, cols] -= vals


def _start(X, y, U, k, W0) -> tuple[np.ndarray, int]:
    n, d = X.shape
    assert U.shape == (n, 2)
    assert len(y) == n
    W = np.zeros((k, d)) if W0 is None else np.array(W0, dtype=np.float64)
    return W, n


def banditron(
    X, y, U: np.ndarray, k: int, *, gamma: float, W0: np.ndarray | None = None
) -> Trace:
    """Banditron (ALGORITHMS.md section 2)."""
    W, n = _start(X, y, U, k, W0)
    played = np.empty(n, dtype=np.int64)
    greedy = np.empty(n, dtype=np.int64)
    rewards = np.empty(n, dtype=np.int8)
    props = np.empty(n, dtype=np.float64)
    for t in range(n):
        cols, vals = _row(X, t)
        s = scores(W, cols, vals)
        g = greedy_label(s, U[t, 1])
        p = epsilon_greedy(k, g, gamma)
        a = sample(p, U[t, 0])
        reward = a == y[t]  # the only place the label is used
        _sub(W, g, cols, vals)
        if reward:
            _add(W, a, cols, vals / p[a])
        played[t], greedy[t], rewards[t], props[t] = a, g, reward, p[a]
    return Trace(W, played, greedy, rewards, props)


def perceptron(X, y, U: np.ndarray, k: int, *, W0: np.ndarray | None = None) -> Trace:
    """Multiclass Perceptron (ALGORITHMS.md section 1), full information."""
    W, n = _start(X, y, U, k, W0)
    played = np.empty(n, dtype=np.int64)
    rewards = np.empty(n, dtype=np.int8)
    props = np.ones(n, dtype=np.float64)
    for t in range(n):
        cols, vals = _row(X, t)
        s = scores(W, cols, vals)
        g = greedy_label(s, U[t, 1])  # u1 = U[t, 0] is drawn but ignored
        if g != y[t]:
            _add(W, int(y[t]), cols, vals)
            _sub(W, g, cols, vals)
        played[t], rewards[t] = g, g == y[t]
    return Trace(W, played, played.copy(), rewards, props)


# name of the estimator class -> (reference function, names of its parameters)
REFERENCES: dict[str, tuple[Callable[..., Trace], tuple[str, ...]]] = {
    "Banditron": (banditron, ("gamma",)),
    "MulticlassPerceptron": (perceptron, ()),
}


def run_partial_fit(
    name: str, X, y, k: int, rng: np.random.Generator, W0=None, **params
) -> Trace:
    """Replay one ``partial_fit(X, y)`` call: ``U = rng.random((n, 2))``."""
    func, names = REFERENCES[name]
    U = rng.random((X.shape[0], 2))
    kwargs = {p: params[p] for p in names}
    return func(X, y, U, k, W0=W0, **kwargs)


class FitTrace(NamedTuple):
    W: np.ndarray
    rows: np.ndarray
    played: np.ndarray
    greedy: np.ndarray
    rewards: np.ndarray
    propensities: np.ndarray


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
    W = None
    parts = []
    for _ in range(max_iter):
        rows = rng.permutation(n) if shuffle else np.arange(n)
        trace = run_partial_fit(name, X[rows], y[rows], k, rng, W0=W, **params)
        W = trace.W
        parts.append((rows, trace))
    return FitTrace(
        W,
        np.concatenate([r for r, _ in parts]),
        *(np.concatenate([tr[i] for _, tr in parts]) for i in range(1, 5)),
    )
