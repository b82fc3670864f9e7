"""Progressive validation of online learners: results as data.

:func:`progressive_validation` streams a data set through a learner chunk by
chunk and records, at log-spaced checkpoints, the cumulative mistakes of the
played action and of the greedy action, with timings. It works on skbandit's
bandit learners (bandit feedback, one round per row) and on any scikit-learn
classifier with ``partial_fit`` (full information, mini-batch: each chunk is
predicted, then learned). :func:`compare` runs several learners on one stream.

Results are small objects (:class:`ProgressiveValidationResult`,
:class:`ComparisonResult`) with ``to_dict()`` and ``to_frame()``; printing
(``str(result)``) and plotting (:func:`plot_learning_curves`) are thin layers.

:func:`off_policy_evaluation` estimates the value of a learner's policy on
logged bandit data (IPS, self-normalised IPS, doubly robust; Dudik, Langford
and Li 2011) with normal-approximation intervals, optional weight clipping, and,
when the weights leave too few effective rounds, a
:class:`LowEffectiveSampleSizeWarning` and a finite-sample betting interval
(IPS, SNIPS) or none (DR), as an :class:`OffPolicyResult`;
:func:`make_off_policy_scorer` makes it a scorer for ``GridSearchCV``.

Logs that outgrow one process (the ``dask`` extra: ``pip install
"skbandit[dask]"``): :func:`dask_off_policy_evaluation` evaluates several
policies over a Dask collection of logged rounds from per-partition
statistics (the same estimates as in memory; :func:`cross_fit_ridge_predictions`
is the in-memory twin of its doubly robust reward model), and
:func:`learn_from_parquet` learns from a Parquet log row group by row group,
resumably (:class:`LogCheckpoint`).
"""

from skbandit.evaluation._distributed import dask_off_policy_evaluation
from skbandit.evaluation._off_policy import (
    LowEffectiveSampleSizeWarning,
    OffPolicyEstimate,
    OffPolicyResult,
    evaluate_policy,
    make_off_policy_scorer,
    off_policy_evaluation,
)
from skbandit.evaluation._ope_statistics import cross_fit_ridge_predictions
from skbandit.evaluation._parquet import (
    LogCheckpoint,
    learn_from_parquet,
    parquet_files,
)
from skbandit.evaluation._plot import plot_learning_curves
from skbandit.evaluation._progressive import (
    ComparisonResult,
    ProgressiveValidationResult,
    compare,
    iter_progressive_validation,
    log_checkpoints,
    progressive_validation,
)

__all__ = [
    "ComparisonResult",
    "LowEffectiveSampleSizeWarning",
    "OffPolicyEstimate",
    "OffPolicyResult",
    "ProgressiveValidationResult",
    "compare",
    "evaluate_policy",
    "iter_progressive_validation",
    "log_checkpoints",
    "make_off_policy_scorer",
    "off_policy_evaluation",
    "plot_learning_curves",
    "progressive_validation",
    "cross_fit_ridge_predictions",
    "dask_off_policy_evaluation",
    "LogCheckpoint",
    "learn_from_parquet",
    "parquet_files",
]
