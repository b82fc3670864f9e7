"""Synthetic streams of the bandit multiclass papers.

- SynSep / SynNonSep (Kakade, Shalev-Shwartz and Tewari, 2008), used again by
  Beygelzimer, Orabona and Zhang (2017): sparse binary rows, 9 classes.
- The separable-case streams of Beygelzimer, Pál, Szörényi, Thiruvenkatachari,
  Wei and Zhang (2019): 3 classes in the plane, strongly or weakly separable
  by a margin.
"""

from __future__ import annotations

from numbers import Real
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from skbandit.datasets._base import _check_int, _make_rng

if TYPE_CHECKING:
    from skbandit._typing import RandomStateLike

__all__ = ["make_separable_stream", "make_synnonsep", "make_synsep"]

# SynSep constants (Kakade et al., 2008): each rare coordinate of a class
# prototype is on with probability 1/4; an example switches off 5 of its
# prototype's active bits and switches on 20 common coordinates.
_P_RARE_ON = 0.25
_N_OFF = 5
_N_ON = 20


def _sample_without_replacement(
    rng: np.random.Generator, n_population: int, n_select: int, n_rows: int
) -> np.ndarray:
    """``n_rows`` independent uniform ``n_select``-subsets of ``range(n_population)``.

    Floyd's algorithm, vectorised over rows: for ``j = N - m, ..., N - 1`` draw
    ``t`` uniform in ``{0, ..., j}`` and add ``t``, or ``j`` when ``t`` was
    already chosen. Each row of the result is a uniformly random subset (in no
    particular order). Cost ``O(n_rows * n_select**2)``, memory
    ``O(n_rows * n_select)``.
    """
    # Built transposed so that every comparison runs over contiguous memory.
    out = np.empty((n_select, n_rows), dtype=np.int32)
    taken = np.empty(n_rows, dtype=bool)
    for i, j in enumerate(range(n_population - n_select, n_population)):
        t = rng.integers(0, j + 1, size=n_rows, dtype=np.int32)
        taken.fill(False)
        for previous in out[:i]:
            taken |= previous == t
        t[taken] = j
        out[i] = t
    return out.T


def _synsep(
    rng: np.random.Generator,
    n_samples: int,
    n_features: int,
    n_classes: int,
    n_rare: int,
    sparse: bool,
):
    """SynSep rows and labels drawn from ``rng`` (shared by SynSep and SynNonSep).

    Dense and sparse outputs consume the same draws, in the same order.
    """
    n_common = n_features - n_rare
    prototypes = rng.random((n_classes, n_rare)) < _P_RARE_ON
    y = rng.integers(0, n_classes, size=n_samples)
    # The 20 common coordinates switched on, per row, sorted.
    common = _sample_without_replacement(rng, n_common, _N_ON, n_samples)
    common.sort(axis=1)
    common += n_rare

    active = [np.flatnonzero(p).astype(np.int32) for p in prototypes]
    n_off = [min(_N_OFF, a.size) for a in active]
    n_kept = [a.size - k for a, k in zip(active, n_off, strict=True)]
    if sparse:
        indptr = np.zeros(n_samples + 1, dtype=np.int64)
        np.cumsum(np.add(n_kept, _N_ON)[y], out=indptr[1:])
        nnz = int(indptr[-1])
        index_dtype = np.int32 if nnz < np.iinfo(np.int32).max else np.int64
        indices = np.empty(nnz, dtype=index_dtype)
    else:
        X = np.zeros((n_samples, n_features))
        X[np.arange(n_samples)[:, None], common] = 1.0

    for c in range(n_classes):
        rows = np.flatnonzero(y == c)
        m = active[c].size
        # The prototype's active bits each row keeps: all but n_off[c] of them,
        # the switched-off ones chosen uniformly without replacement.
        off = _sample_without_replacement(rng, m, n_off[c], rows.size)
        keep = np.ones((rows.size, m), dtype=bool)
        keep[np.arange(rows.size)[:, None], off] = False
        kept = np.broadcast_to(active[c], (rows.size, m))[keep]
        kept = kept.reshape(rows.size, n_kept[c])
        if sparse:
            # Rare indices (< n_rare) first, then the common ones: each row's
            # indices are sorted.
            start = indptr[rows][:, None]
            indices[start + np.arange(n_kept[c])] = kept
            indices[start + (n_kept[c] + np.arange(_N_ON))] = common[rows]
        else:
            X[rows[:, None], kept] = 1.0

    if sparse:
        X = sp.csr_matrix(
            (np.ones(nnz), indices, indptr.astype(index_dtype, copy=False)),
            shape=(n_samples, n_features),
        )
        X.has_sorted_indices = True
    return X, y.astype(np.int64, copy=False)


def _check_synsep(n_samples, n_features, n_classes, n_rare) -> tuple[int, ...]:
    n_samples = _check_int(n_samples, "n_samples", 0)
    n_classes = _check_int(n_classes, "n_classes", 2)
    n_rare = _check_int(n_rare, "n_rare", 1)
    n_features = _check_int(n_features, "n_features", n_rare + _N_ON)
    return n_samples, n_features, n_classes, n_rare


def make_synsep(
    n_samples: int = 100_000,
    *,
    n_features: int = 400,
    n_classes: int = 9,
    n_rare: int = 120,
    sparse: bool = False,
    random_state: RandomStateLike = None,
) -> tuple[np.ndarray | sp.csr_matrix, np.ndarray]:
    """The SynSep stream of Kakade et al. (2008): sparse binary, separable.

    Coordinates ``0 .. n_rare - 1`` are *rare*, the others *common*. Each class
    ``c`` has a fixed binary prototype ``v_c`` that switches on each rare
    coordinate independently with probability 1/4 (about 30 ones for the
    defaults) and no common coordinate. Each example picks its class uniformly
    at random, copies the class prototype, switches off 5 of its active bits
    chosen uniformly at random without replacement, and switches on 20 common
    coordinates chosen uniformly at random without replacement; its label is
    the class. A row thus has ``|v_c| - 5 + 20`` ones (45 on average for the
    defaults).

    The stream is linearly separable whenever every prototype keeps more than
    5 active bits outside every other prototype (``|v_c minus v_c'| > 5``),
    which holds with overwhelming probability for the defaults: then
    ``W = (v_1, ..., v_k)`` scores the true class ``|v_c| - 5`` and any other
    class at most ``|v_c and v_c'|``, a margin of at least 1.

    Parameters
    ----------
    n_samples : int, default=100_000
        Number of rows. The papers use ``10**6``.
    n_features : int, default=400
        Number of coordinates ``d``; must be at least ``n_rare + 20``.
    n_classes : int, default=9
        Number of classes ``k``.
    n_rare : int, default=120
        Number of rare coordinates (the prototypes live on them).
    sparse : bool, default=False
        Return ``X`` as a ``scipy.sparse.csr_matrix`` with sorted indices,
        built directly without a dense intermediate (a dense float64 array of
        ``10**6`` rows takes 3.2 GB; the CSR matrix about 0.55 GB).
    random_state : int, numpy.random.Generator, RandomState or None, \
default=None
        Seed of the draws. The same seed gives the same stream, dense or
        sparse.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features) or csr_matrix
        Rows of zeros and ones (float64).
    y : ndarray of shape (n_samples,)
        Labels in ``0 .. n_classes - 1`` (int64).

    Notes
    -----
    If a prototype has 5 active bits or fewer (probability below ``1e-6``
    per class for the defaults, but likely for a small ``n_rare``), its
    examples switch off *all* of them and keep only their 20 common
    coordinates; such a class is not separable from another one with the
    same fate. Two classes with identical prototypes are not separable either.

    Draws, in order, from ``numpy.random.default_rng(random_state)``: the
    prototypes, the labels, the common coordinates of every row, then the
    switched-off bits class by class.

    References
    ----------
    .. [1] S. M. Kakade, S. Shalev-Shwartz and A. Tewari. "Efficient bandit
       algorithms for online multiclass prediction." ICML 2008, pp. 440-447.
    .. [2] A. Beygelzimer, F. Orabona and C. Zhang. "Efficient online bandit
       multiclass learning with O(sqrt(T)) regret." ICML 2017 (SynSep and
       SynNonSep in Section 6).

    Examples
    --------
    >>> from skbandit.datasets import make_synsep
    >>> X, y = make_synsep(1000, random_state=0)
    >>> X.shape, y.shape
    ((1000, 400), (1000,))
    >>> sorted(set(X.ravel().tolist())), sorted(set(y.tolist())) == list(range(9))
    ([0.0, 1.0], True)
    >>> bool(40 < X.sum(axis=1).mean() < 50)
    True
    >>> Xs, _ = make_synsep(1000, sparse=True, random_state=0)
    >>> bool((Xs.toarray() == X).all())
    True
    """
    n_samples, n_features, n_classes, n_rare = _check_synsep(
        n_samples, n_features, n_classes, n_rare
    )
    rng = _make_rng(random_state)
    return _synsep(rng, n_samples, n_features, n_classes, n_rare, bool(sparse))


def make_synnonsep(
    n_samples: int = 100_000,
    *,
    n_features: int = 400,
    n_classes: int = 9,
    n_rare: int = 120,
    noise: float = 0.05,
    sparse: bool = False,
    random_state: RandomStateLike = None,
) -> tuple[np.ndarray | sp.csr_matrix, np.ndarray]:
    """The SynNonSep stream: SynSep with label noise (Kakade et al., 2008).

    The rows and clean labels are those of :func:`make_synsep` with the same
    arguments and seed; then each example independently, with probability
    ``noise``, gets a label drawn uniformly over *all* ``n_classes`` classes
    (possibly its own). The expected fraction of changed labels is therefore
    ``noise * (n_classes - 1) / n_classes``, ``0.05 * 8 / 9`` for the
    defaults. Learners are fed and scored with the noisy labels, as in the
    papers.

    Parameters
    ----------
    n_samples : int, default=100_000
        Number of rows. The papers use ``10**6``.
    n_features : int, default=400
        Number of coordinates; must be at least ``n_rare + 20``.
    n_classes : int, default=9
        Number of classes.
    n_rare : int, default=120
        Number of rare coordinates.
    noise : float, default=0.05
        Probability, per example, that its label is redrawn uniformly.
    sparse : bool, default=False
        Return ``X`` as a CSR matrix (see :func:`make_synsep`).
    random_state : int, numpy.random.Generator, RandomState or None, \
default=None
        Seed. With an int seed, ``X`` equals ``make_synsep(...)[0]`` of the
        same seed and only the labels differ.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features) or csr_matrix
        Rows of zeros and ones (float64).
    y : ndarray of shape (n_samples,)
        Noisy labels in ``0 .. n_classes - 1`` (int64).

    References
    ----------
    .. [1] S. M. Kakade, S. Shalev-Shwartz and A. Tewari. "Efficient bandit
       algorithms for online multiclass prediction." ICML 2008, pp. 440-447.
    .. [2] A. Beygelzimer, F. Orabona and C. Zhang. "Efficient online bandit
       multiclass learning with O(sqrt(T)) regret." ICML 2017.

    Examples
    --------
    >>> import numpy as np
    >>> from skbandit.datasets import make_synnonsep, make_synsep
    >>> X, y = make_synnonsep(20_000, random_state=0)
    >>> X_clean, y_clean = make_synsep(20_000, random_state=0)
    >>> bool((X == X_clean).all())
    True
    >>> rate = float(np.mean(y != y_clean))  # about 0.05 * 8 / 9
    >>> bool(0.035 < rate < 0.054)
    True
    """
    n_samples, n_features, n_classes, n_rare = _check_synsep(
        n_samples, n_features, n_classes, n_rare
    )
    if (
        isinstance(noise, bool)
        or not isinstance(noise, Real)
        or not 0.0 <= float(noise) <= 1.0
    ):
        raise ValueError(f"noise must be a float in [0, 1]; got {noise!r}.")
    rng = _make_rng(random_state)
    X, y = _synsep(rng, n_samples, n_features, n_classes, n_rare, bool(sparse))
    redrawn = rng.random(n_samples) < noise
    y[redrawn] = rng.integers(0, n_classes, size=int(redrawn.sum()))
    return X, y


# Separable-case streams (Beygelzimer et al., 2019, experiments).
_STREAM_ANGLES = np.deg2rad([0.0, 30.0, -30.0])
_STREAM_W = np.column_stack([np.cos(_STREAM_ANGLES), np.sin(_STREAM_ANGLES)])
# Largest top-two gap any point of the unit disc can have with these rows:
# 2 sin(15 deg), reached at angles +-105 deg.
_STREAM_MAX_GAP = 2.0 * np.sin(np.deg2rad(15.0))
_STREAM_BATCH = 1 << 16


def make_separable_stream(
    n_samples: int,
    *,
    margin: float = 0.05,
    strong: bool = True,
    random_state: RandomStateLike = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The separable-case streams of Beygelzimer et al. (2019): 3 classes.

    A linear model ``W*`` in the plane has 3 unit rows at angles 0, +30 and
    -30 degrees (classes 0, 1 and 2). A candidate point has angle uniform in
    [-15, 15] degrees with probability 0.8, else uniform in [15, 345] degrees,
    and radius 1 (``strong=True``) or uniform in [0, 1] (``strong=False``).
    Candidates whose two largest scores ``W* x`` differ by less than
    ``margin`` are rejected (rejection sampling, vectorised); the label of an
    accepted point is ``argmax W* x``. The returned features are the point
    mapped to ``[x_1, x_2, 1] / sqrt(2)``, as in the paper's experiments, so
    every row has norm at most 1 (exactly 1 when ``strong=True``), as the
    rational kernel ``1 / (1 - <x, x'> / 2)`` requires.

    Parameters
    ----------
    n_samples : int
        Number of rows. The paper uses ``5 * 10**6``.
    margin : float, default=0.05
        The minimum gap ``gamma`` between the two largest scores. Must be in
        ``[0, 2 sin(15 deg))`` (about 0.5176), the largest gap a point of the
        unit disc can have.
    strong : bool, default=True
        Radius 1 (the paper's strongly separable experiment) or uniform in
        [0, 1] (its weakly separable experiment).
    random_state : int, numpy.random.Generator, RandomState or None, \
default=None
        Seed of the draws. Candidates are drawn in fixed batches of 65,536, so
        the stream of ``n`` rows is a prefix of the stream of ``n' > n`` rows
        with the same seed.

    Returns
    -------
    X : ndarray of shape (n_samples, 3)
        ``[x_1, x_2, 1] / sqrt(2)`` (float64).
    y : ndarray of shape (n_samples,)
        Labels in ``{0, 1, 2}`` (int64).

    Notes
    -----
    Accepted points are no longer an 80/20 mixture: the margin removes a
    larger share of the inner sector [-15, 15] degrees, whose boundaries with
    classes 1 and 2 lie at +-15 degrees. In the weak stream the gap of a point
    is proportional to its radius, so the margin also rejects the points near
    the origin.

    References
    ----------
    .. [1] A. Beygelzimer, D. Pál, B. Szörényi, D. Thiruvenkatachari, C.-Y. Wei
       and C. Zhang. "Bandit multiclass linear classification: efficient
       algorithms for the separable case." ICML 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from skbandit.datasets import make_separable_stream
    >>> X, y = make_separable_stream(1000, random_state=0)
    >>> X.shape, sorted(set(y.tolist()))
    ((1000, 3), [0, 1, 2])
    >>> np.allclose(np.linalg.norm(X, axis=1), 1.0)
    True
    >>> X_weak, _ = make_separable_stream(1000, strong=False, random_state=0)
    >>> bool((np.linalg.norm(X_weak, axis=1) <= 1.0).all())
    True
    """
    n_samples = _check_int(n_samples, "n_samples", 0)
    if (
        isinstance(margin, bool)
        or not isinstance(margin, Real)
        or not 0.0 <= float(margin) < _STREAM_MAX_GAP
    ):
        raise ValueError(
            f"margin must be a float in [0, {_STREAM_MAX_GAP:.4f}) (2 sin 15 deg, "
            f"the largest possible gap); got {margin!r}."
        )
    margin = float(margin)
    rng = _make_rng(random_state)
    points, labels, n_kept = [], [], 0
    while n_kept < n_samples:
        inner = rng.random(_STREAM_BATCH) < 0.8
        u = rng.random(_STREAM_BATCH)
        angle = np.deg2rad(np.where(inner, -15.0 + 30.0 * u, 15.0 + 330.0 * u))
        x = np.column_stack([np.cos(angle), np.sin(angle)])
        if not strong:
            x *= rng.random(_STREAM_BATCH)[:, None]
        scores = x @ _STREAM_W.T
        top2 = np.sort(scores, axis=1)[:, -2:]
        accepted = top2[:, 1] - top2[:, 0] >= margin
        points.append(x[accepted])
        labels.append(np.argmax(scores[accepted], axis=1))
        n_kept += int(accepted.sum())
    x = np.concatenate(points)[:n_samples] if points else np.empty((0, 2))
    y = np.concatenate(labels)[:n_samples] if labels else np.empty(0)
    X = np.column_stack([x, np.ones(len(x))]) / np.sqrt(2.0)
    return X, y.astype(np.int64)
