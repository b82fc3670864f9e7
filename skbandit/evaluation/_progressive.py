"""Progressive validation: test on each row (or chunk) before learning it.

The river anchor (``evaluate/progressive_validation.py``): a generator yields
checkpoints, :func:`progressive_validation` collects them into a result
object, and printing is a thin layer over that data.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import _num_samples, column_or_1d

from skbandit._docstring import fill_doc
from skbandit.base import BaseBanditClassifier
from skbandit.evaluation._format import _progress_bar
from skbandit.evaluation._progressive_results import (
    ComparisonResult,
    ProgressiveValidationResult,
)
from skbandit.feedback import BanditFeedback

if TYPE_CHECKING:
    from skbandit._typing import ArrayLike, MatrixLike

__all__ = [
    "ComparisonResult",
    "ProgressiveValidationResult",
    "compare",
    "iter_progressive_validation",
    "log_checkpoints",
    "progressive_validation",
]

_FULL_INFORMATION = frozenset({"MulticlassPerceptron"})

#: the arrays of a skbandit learner's feedback log, in the order
#: ``_iter_skbandit`` appends them
_LOG_KEYS = ("rows", "actions", "rewards", "propensities")

#: docstring fragments of the stream parameters (``fill_doc``)
_STREAM_DOCS = {
    "stream": """\
X : {array-like, sparse matrix} of shape (n_samples, n_features)
    The stream, in order.
y : array-like of shape (n_samples,)
    True labels (a skbandit learner sees only its reward bit).
classes : array-like, default=None
    All classes; defaults to ``numpy.unique(y)``. Passed on the first
    ``partial_fit`` call of an unfitted estimator.
chunk_size : int, default=1000
    Rows per ``partial_fit`` call (the mini-batch of a full-information
    model).
checkpoints : int, sequence of int or None, default=50
    Number of log-spaced checkpoints, or the 1-based round indices
    themselves (global over the stream); the last round is always one.""",
    "progress": """\
progress : bool, default=False
    Show a progress bar (only when tqdm is installed and stderr is a
    terminal).""",
}


def log_checkpoints(n_rounds: int, n_checkpoints: int = 50) -> np.ndarray:
    """Log-spaced round indices ``1 <= t <= n_rounds``, always ending at ``n_rounds``.

    Parameters
    ----------
    n_rounds : int
        Length of the stream.
    n_checkpoints : int, default=50
        Number of log-spaced points asked for; fewer are returned when some
        round to the same integer.

    Returns
    -------
    rounds : ndarray of shape (n,), dtype int64
        Sorted unique 1-based round indices; the last is ``n_rounds``.

    Examples
    --------
    >>> from skbandit.evaluation import log_checkpoints
    >>> log_checkpoints(1000, 4).tolist()
    [1, 10, 100, 1000]
    >>> log_checkpoints(0).tolist()
    []
    """
    n_rounds = int(n_rounds)
    if n_rounds <= 0:
        return np.empty(0, dtype=np.int64)
    n_checkpoints = max(int(n_checkpoints), 1)
    points = np.round(np.logspace(0, np.log10(n_rounds), n_checkpoints))
    points = np.unique(np.clip(points.astype(np.int64), 1, n_rounds))
    if points[-1] != n_rounds:
        points = np.append(points, n_rounds)
    return points


def _checkpoints(n: int, checkpoints) -> np.ndarray:
    if checkpoints is None or isinstance(checkpoints, int | np.integer):
        return log_checkpoints(n, 50 if checkpoints is None else int(checkpoints))
    points = np.unique(np.asarray(checkpoints, dtype=np.int64))
    if points.size and (points[0] < 1 or points[-1] > n):
        raise ValueError(
            f"checkpoints must lie in [1, n_samples={n}], got {points[0]} to "
            f"{points[-1]}"
        )
    if not points.size or points[-1] != n:
        points = np.append(points, n)
    return points


def _is_skbandit(estimator) -> bool:
    return isinstance(estimator, BaseBanditClassifier)


def _feedback_kind(estimator) -> str:
    if not _is_skbandit(estimator):
        return "full"
    if type(estimator).__name__ in _FULL_INFORMATION:
        return "full"
    if getattr(estimator, "feedback", "bandit") == "full":
        return "full"
    return "bandit"


def _protocol(estimator, chunk_size: int) -> str:
    if _is_skbandit(estimator):
        return (
            "online, one round per row (skbandit learner; chunks of "
            f"{chunk_size} rows do not change the result)"
        )
    return (
        f"full information, mini-batch of {chunk_size} rows: each chunk is "
        "predicted, then learned (an unfitted model predicts the first class)"
    )


def _slice(X, lo: int, hi: int):
    return X[lo:hi]


def _validate_stream(X, y):
    n = _num_samples(X)
    y = column_or_1d(y, warn=True, input_name="y")
    if y.shape[0] != n:
        raise ValueError(f"X has {n} rows but y has {y.shape[0]} labels")
    if sp.issparse(X) and not sp.isspmatrix_csr(X) and X.format != "csr":
        X = sp.csr_matrix(X)
    return X, y, n


def _stream_classes(y, classes) -> np.ndarray:
    """All classes of the stream: ``classes`` as an array, by default
    ``numpy.unique(y)``."""
    if classes is None:
        classes = np.unique(y)
    return np.asarray(classes)


@fill_doc(**_STREAM_DOCS)
def iter_progressive_validation(
    estimator: Any,
    X: MatrixLike,
    y: ArrayLike,
    *,
    classes: ArrayLike | None = None,
    chunk_size: int = 1000,
    checkpoints: int | ArrayLike | None = 50,
    progress: bool = False,
    _log: list | None = None,
) -> Iterator[dict[str, Any]]:
    """Stream ``(X, y)`` through ``estimator``; yield the counts at checkpoints.

    A skbandit learner plays one round per row through ``partial_fit`` with a
    :class:`~skbandit.BanditFeedback` per chunk (chunks are cut at the
    checkpoints too, which does not change the result: skbandit learners are
    chunk invariant). Any other classifier with ``partial_fit`` gets full
    information in mini-batches: each chunk is predicted with the current
    model, then learned; an unfitted model predicts the first class.

    The estimator is updated in place, continuing from its current state.

    Parameters
    ----------
    estimator : estimator with ``partial_fit``
        A skbandit learner or a scikit-learn classifier.
    {stream}
    {progress}

    Yields
    ------
    checkpoint : dict
        ``round`` (1-based index in the stream), ``mistakes`` and
        ``greedy_mistakes`` (cumulative counts over rounds ``1..round``),
        ``seconds`` (cumulative time in prediction and learning; for
        mini-batch models, interpolated inside a chunk).

    Examples
    --------
    >>> import numpy as np
    >>> from skbandit import Banditron
    >>> from skbandit.exploration import EpsilonGreedy
    >>> from skbandit.evaluation import iter_progressive_validation
    >>> X = np.eye(3)[np.arange(300) % 3]
    >>> y = np.arange(300) % 3
    >>> steps = iter_progressive_validation(
    ...     Banditron(exploration=EpsilonGreedy(0.2), random_state=0), X, y,
    ...     checkpoints=[10, 100])
    >>> [step["round"] for step in steps]
    [10, 100, 300]
    """
    chunk_size = int(chunk_size)
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    if not hasattr(estimator, "partial_fit"):
        raise TypeError(
            f"{type(estimator).__name__} has no partial_fit: progressive "
            "validation needs an online learner"
        )
    X, y, n = _validate_stream(X, y)
    points = _checkpoints(n, checkpoints)
    classes = _stream_classes(y, classes)
    fitted = hasattr(estimator, "classes_")
    bar = _progress_bar(progress, n, type(estimator).__name__)
    try:
        if _is_skbandit(estimator):
            yield from _iter_skbandit(
                estimator, X, y, n, points, classes, fitted, chunk_size, bar, _log
            )
        else:
            yield from _iter_full(
                estimator, X, y, n, points, classes, fitted, chunk_size, bar
            )
    finally:
        if bar is not None:
            bar.close()


def _iter_skbandit(estimator, X, y, n, points, classes, fitted, chunk_size, bar, log):
    bounds = np.union1d(np.arange(chunk_size, n, chunk_size), points)
    bounds = bounds[(bounds > 0) & (bounds <= n)]
    wanted = set(points.tolist())
    m0 = getattr(estimator, "n_mistakes_", 0) if fitted else 0
    g0 = getattr(estimator, "n_greedy_mistakes_", 0) if fitted else 0
    elapsed, lo = 0.0, 0
    for hi in bounds.tolist():
        start = time.perf_counter()
        feedback = BanditFeedback(y[lo:hi])
        estimator.partial_fit(
            _slice(X, lo, hi), feedback, classes=None if fitted else classes
        )
        elapsed += time.perf_counter() - start
        fitted = True
        if log is not None:
            log.append(
                (
                    feedback.rows_ + lo,
                    feedback.actions_,
                    feedback.rewards_,
                    feedback.propensities_,
                )
            )
        if bar is not None:
            bar.update(hi - lo)
        lo = hi
        if hi in wanted:
            yield {
                "round": hi,
                "mistakes": int(estimator.n_mistakes_ - m0),
                "greedy_mistakes": int(estimator.n_greedy_mistakes_ - g0),
                "seconds": elapsed,
            }


def _iter_full(estimator, X, y, n, points, classes, fitted, chunk_size, bar):
    mistakes, elapsed, p = 0, 0.0, 0
    for lo in range(0, n, chunk_size):
        hi = min(lo + chunk_size, n)
        start = time.perf_counter()
        Xc, yc = _slice(X, lo, hi), y[lo:hi]
        if fitted:
            predicted = estimator.predict(Xc)
        else:
            predicted = np.full(hi - lo, classes[0], dtype=classes.dtype)
        if fitted:
            estimator.partial_fit(Xc, yc)
        else:
            estimator.partial_fit(Xc, yc, classes=classes)
        chunk_seconds = time.perf_counter() - start
        fitted = True
        cumulative = mistakes + np.cumsum(predicted != yc)
        while p < points.size and points[p] <= hi:
            at = int(points[p])
            value = int(cumulative[at - lo - 1])
            yield {
                "round": at,
                "mistakes": value,
                "greedy_mistakes": value,
                "seconds": elapsed + chunk_seconds * (at - lo) / (hi - lo),
            }
            p += 1
        mistakes = int(cumulative[-1])
        elapsed += chunk_seconds
        if bar is not None:
            bar.update(hi - lo)


def _params(estimator) -> dict:
    try:
        params = estimator.get_params(deep=False)
    except AttributeError:
        return {}
    return {
        k: v if v is None or isinstance(v, bool | int | float | str) else repr(v)
        for k, v in params.items()
    }


@fill_doc(**_STREAM_DOCS)
def progressive_validation(
    estimator: Any,
    X: MatrixLike,
    y: ArrayLike,
    *,
    classes: ArrayLike | None = None,
    chunk_size: int = 1000,
    checkpoints: int | ArrayLike | None = 50,
    log: bool = False,
    progress: bool = False,
    name: str | None = None,
) -> ProgressiveValidationResult:
    """Progressive validation of one learner: online error, mistakes, speed.

    Each row is predicted before it is learned. For a skbandit learner the
    played action and the greedy action are both counted (they are the
    learner's own ``n_mistakes_`` and ``n_greedy_mistakes_``); for any other
    classifier with ``partial_fit`` the stream is played with full
    information in mini-batches of ``chunk_size`` rows (predict the chunk,
    then learn it), which the result's ``protocol`` states. The estimator is
    updated in place.

    Parameters
    ----------
    estimator : estimator with ``partial_fit``
        A skbandit learner or a scikit-learn classifier.
    {stream}
    log : bool, default=False
        Keep the whole feedback log of a skbandit learner (global row
        indices, actions, rewards, propensities) in ``result.log``.
    {progress}
    name : str, default=None
        Name in the result; defaults to the estimator's class name.

    Returns
    -------
    result : ProgressiveValidationResult

    See Also
    --------
    compare : several learners on the same stream.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from skbandit import Banditron
    >>> from skbandit.exploration import EpsilonGreedy
    >>> from skbandit.evaluation import progressive_validation
    >>> X, y = load_digits(return_X_y=True)
    >>> clf = Banditron(exploration=EpsilonGreedy(0.1), random_state=0)
    >>> result = progressive_validation(clf, X / 16, y, checkpoints=5)
    >>> result.rounds.tolist()
    [1, 7, 42, 276, 1797]
    >>> result.n_mistakes == clf.n_mistakes_, result.n_rounds == clf.t_
    (True, True)
    >>> 0.0 < result.error < 1.0 and 0.0 < result.greedy_error < 1.0
    True
    """
    entries: list | None = [] if (log and _is_skbandit(estimator)) else None
    chunk_size = int(chunk_size)
    steps = list(
        iter_progressive_validation(
            estimator,
            X,
            y,
            classes=classes,
            chunk_size=chunk_size,
            checkpoints=checkpoints,
            progress=progress,
            _log=entries,
        )
    )
    logged = None
    if entries is not None:
        logged = {
            key: np.concatenate([e[i] for e in entries]) if entries else np.empty(0)
            for i, key in enumerate(_LOG_KEYS)
        }
    return ProgressiveValidationResult(
        name=name or type(estimator).__name__,
        feedback=_feedback_kind(estimator),
        protocol=_protocol(estimator, chunk_size),
        chunk_size=chunk_size,
        rounds=np.array([s["round"] for s in steps], dtype=np.int64),
        mistakes=np.array([s["mistakes"] for s in steps], dtype=np.int64),
        greedy_mistakes=np.array([s["greedy_mistakes"] for s in steps], dtype=np.int64),
        seconds=np.array([s["seconds"] for s in steps], dtype=np.float64),
        params=_params(estimator),
        log=logged,
    )


@fill_doc(**_STREAM_DOCS)
def compare(
    estimators: Mapping[str, Any] | Sequence[Any],
    X: MatrixLike,
    y: ArrayLike,
    *,
    classes: ArrayLike | None = None,
    chunk_size: int = 1000,
    checkpoints: int | ArrayLike | None = 50,
    progress: bool = False,
) -> ComparisonResult:
    """Progressive validation of several learners on the same stream.

    Parameters
    ----------
    estimators : dict of name to estimator, or sequence of estimators
        The learners (updated in place); a sequence is named by class name.
    {stream}
    {progress}

    Returns
    -------
    results : ComparisonResult

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.linear_model import Perceptron
    >>> from skbandit import Banditron
    >>> from skbandit.exploration import EpsilonGreedy
    >>> from skbandit.evaluation import compare
    >>> X, y = load_digits(return_X_y=True)
    >>> bandit = Banditron(exploration=EpsilonGreedy(0.1), random_state=0)
    >>> results = compare({"Banditron": bandit,
    ...                    "Perceptron": Perceptron(random_state=0)},
    ...                   X / 16, y, chunk_size=100)
    >>> print(results)  # doctest: +SKIP
    learner     feedback  rounds   error  greedy_error  rounds_per_s
    ----------  --------  ------  ------  ------------  ------------
    Banditron     bandit   1,797  0.7201        0.7034        44,888
    Perceptron      full   1,797  0.2382        0.2382        12,533
    >>> [r.feedback for r in results]
    ['bandit', 'full']
    >>> results["Perceptron"].error < results["Banditron"].error
    True
    """
    if isinstance(estimators, Mapping):
        items = list(estimators.items())
    else:
        items = [(type(e).__name__, e) for e in estimators]
    X, y, _ = _validate_stream(X, y)
    classes = _stream_classes(y, classes)
    return ComparisonResult(
        [
            progressive_validation(
                est,
                X,
                y,
                classes=classes,
                chunk_size=chunk_size,
                checkpoints=checkpoints,
                progress=progress,
                name=name,
            )
            for name, est in items
        ]
    )
