"""Small synthetic streams shared by the tests."""

from __future__ import annotations

import numpy as np


def make_stream(
    n: int = 300,
    d: int = 12,
    k: int = 3,
    *,
    kind: str = "gaussian",
    density: float = 0.3,
    n_empty: int = 10,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Dense float64 ``X`` (mostly zeros, ``n_empty`` all-zero rows) and codes ``y``.

    The label is the argmax of a random linear model (so the learners can learn
    something) with 10% of the labels replaced by uniform noise.

    ``kind="gaussian"``: non-zero values are standard normal (ties only at W = 0
    and on empty rows). ``kind="binary"``: non-zero values are 1.0, which makes exact
    score ties frequent (integer-valued weights for the Perceptron).
    """
    rng = np.random.default_rng(seed)
    mask = rng.random((n, d)) < density
    if kind == "gaussian":
        values = rng.standard_normal((n, d))
    elif kind == "binary":
        values = np.ones((n, d))
    else:
        raise ValueError(kind)
    X = np.where(mask, values, 0.0)
    empty = rng.choice(n, size=min(n_empty, n), replace=False)
    X[empty] = 0.0
    W_true = rng.standard_normal((k, d))
    y = np.argmax(X @ W_true.T + 1e-3 * rng.standard_normal((n, k)), axis=1)
    noisy = rng.random(n) < 0.1
    y[noisy] = rng.integers(0, k, size=int(noisy.sum()))
    return X, y.astype(np.int64)


def label_values(k: int, seed: int = 0) -> np.ndarray:
    """k sorted, distinct, non-contiguous integer labels (some negative)."""
    rng = np.random.default_rng(seed + 1000)
    return np.sort(rng.choice(200, size=k, replace=False)) - 100
