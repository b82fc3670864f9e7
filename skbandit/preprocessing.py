"""Transformers updated online from contexts, for bandit pipelines.

A bandit learner sees each row (the context) before any feedback on it, so a
transformer may learn from the rows without ever seeing a label.
``OnlineStandardScaler`` is such a transformer: its statistics are running
sums over the rows seen, updated one row at a time, so that learning from a
stream in chunks gives exactly what one call over the whole stream gives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from skbandit._core._feature_map import standardise_rows
from skbandit._docstring import fill_doc

if TYPE_CHECKING:
    from skbandit._typing import MatrixLike

__all__ = ["OnlineStandardScaler"]

# the Parameters and Returns sections of ``fit`` and ``partial_fit``
_FIT_PARAMETERS = """\
Parameters
----------
X : {array-like, sparse matrix} of shape (n_samples, n_features)
    Rows.
y : None
    Ignored.

Returns
-------
self : object
    The scaler."""


class OnlineStandardScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    r"""Running standardisation, row by row: chunk-invariant and label-free.

    Keeps, for each feature ``c``, the number ``n`` of rows seen, their mean
    ``m_c`` and the sum ``M_c`` of squared deviations from it, updated one row
    at a time by Welford's recurrence (Welford 1962; Knuth, TAOCP vol. 2,
    4.2.2):

    .. math:: n \leftarrow n + 1, \quad \delta = x_c - m_c, \quad
              m_c \leftarrow m_c + \delta / n, \quad
              M_c \leftarrow M_c + \delta (x_c - m_c).

    A row is scaled as ``u_c = (x_c - m_c) / s_c`` with ``s_c = sqrt(M_c /
    n)`` (the population standard deviation, as scikit-learn's
    ``StandardScaler``), ``s_c = 1`` when ``n = 0`` or ``s_c < 10 eps`` (a
    constant feature is only centred).

    ``partial_fit_transform`` is the online transformation a bandit pipeline
    makes (``skbandit.pipeline.BanditPipeline``): **row t is scaled with the
    statistics of rows 1 .. t-1** (the rows of earlier calls and the earlier
    rows of the same call), then taken into them. The output of row ``t``
    therefore depends on the rows before it only, never on a label and never
    on how the stream was cut into calls: calls over consecutive chunks return
    what one call over their concatenation returns, bit for bit, and end in
    the same statistics (``partial_fit`` likewise). scikit-learn's
    ``StandardScaler.partial_fit`` merges a chunk's batch statistics (Chan et
    al. 1979), which rounds differently for different chunks, and a pipeline
    that transforms a chunk before or after that merge scales its rows with
    statistics that depend on the chunking; hence this class.

    ``transform`` scales with the current statistics without updating them
    (the same scaling the next row of ``partial_fit_transform`` would get).
    Sparse input is densified (centring fills in the zeros).

    Parameters
    ----------
    with_mean : bool, default=True
        Subtract the running mean.
    with_std : bool, default=True
        Divide by the running standard deviation.

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
        Running mean ``m`` of each feature.
    var_sum_ : ndarray of shape (n_features,)
        Running sum ``M`` of squared deviations of each feature.
    n_samples_seen_ : int
        Rows taken into the statistics.
    var_ : ndarray of shape (n_features,)
        ``M / n`` (zeros while ``n = 0``).
    scale_ : ndarray of shape (n_features,)
        The divisors ``s`` (ones where ``with_std=False``).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit (string column names only).

    See Also
    --------
    sklearn.preprocessing.StandardScaler : Batch statistics.
    skbandit.pipeline.BanditPipeline : Runs this scaler online in front of a
        bandit learner.

    References
    ----------
    B. P. Welford, "Note on a method for calculating corrected sums of squares
    and products", Technometrics 4(3), 1962.

    T. F. Chan, G. H. Golub and R. J. LeVeque, "Updating formulae and a
    pairwise algorithm for computing sample variances", 1979.

    Examples
    --------
    >>> import numpy as np
    >>> from skbandit.preprocessing import OnlineStandardScaler
    >>> X = np.array([[1.0], [3.0], [5.0], [7.0]])
    >>> OnlineStandardScaler().partial_fit_transform(X).ravel()
    array([1.        , 2.        , 3.        , 2.44948974])
    """

    _parameter_constraints: dict = {"with_mean": ["boolean"], "with_std": ["boolean"]}

    def __init__(self, *, with_mean: bool = True, with_std: bool = True) -> None:
        self.with_mean = with_mean
        self.with_std = with_std

    def _rows(self, X, reset: bool) -> np.ndarray:
        X = validate_data(
            self, X, reset=reset, accept_sparse="csr", dtype=np.float64, order="C"
        )
        return np.ascontiguousarray(X.toarray() if sp.issparse(X) else X)

    def _start(self, n_features: int) -> None:
        self.mean_ = np.zeros(n_features, dtype=np.float64)
        self.var_sum_ = np.zeros(n_features, dtype=np.float64)
        self._count = np.zeros(1, dtype=np.int64)

    def _run(self, X, update: bool, reset: bool) -> np.ndarray:
        self._validate_params()
        first = reset or not hasattr(self, "mean_")
        X = self._rows(X, reset=first)
        out = np.empty_like(X)
        if first:
            self._start(X.shape[1])
        mean, var_sum, count = self.mean_, self.var_sum_, self._count
        if update:
            # a copy, written back when every row is done (a failure leaves
            # the statistics as they were)
            mean, var_sum, count = mean.copy(), var_sum.copy(), count.copy()
        standardise_rows(
            X, mean, var_sum, count, self.with_mean, self.with_std, out, update
        )
        if update:
            self.mean_, self.var_sum_, self._count = mean, var_sum, count
        return out

    @fill_doc(fit_parameters=_FIT_PARAMETERS)
    def fit(self, X: MatrixLike, y=None) -> Self:
        """Statistics of the rows of X (a new start).

        {fit_parameters}
        """
        self._run(X, update=True, reset=True)
        return self

    @fill_doc(fit_parameters=_FIT_PARAMETERS)
    def partial_fit(self, X: MatrixLike, y=None) -> Self:
        """Take the rows of X into the running statistics, in order.

        {fit_parameters}
        """
        self._run(X, update=True, reset=False)
        return self

    def partial_fit_transform(self, X: MatrixLike) -> np.ndarray:
        """Scale each row with the statistics of the rows before it, then take
        it into them (the online transformation; chunk-invariant).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows of the stream, in order.

        Returns
        -------
        U : ndarray of shape (n_samples, n_features)
            The scaled rows.
        """
        return self._run(X, update=True, reset=False)

    def transform(self, X: MatrixLike) -> np.ndarray:
        """Scale the rows of X with the current statistics (no update).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows.

        Returns
        -------
        U : ndarray of shape (n_samples, n_features)
            The scaled rows.
        """
        check_is_fitted(self)
        return self._run(X, update=False, reset=False)

    @property
    def n_samples_seen_(self) -> int:
        """Rows taken into the statistics."""
        check_is_fitted(self)
        return int(self._count[0])

    @property
    def var_(self) -> np.ndarray:
        """The running variances ``M / n`` (zeros while no row was seen)."""
        n = self.n_samples_seen_
        return self.var_sum_ / n if n else np.zeros_like(self.var_sum_)

    @property
    def scale_(self) -> np.ndarray:
        """The divisors ``s`` of ``transform``."""
        n = self.n_samples_seen_
        s = np.ones_like(self.var_sum_)
        if self.with_std and n:
            s = np.sqrt(self.var_sum_ / n)
            s[~(s >= 10 * np.finfo(np.float64).eps)] = 1.0
        return s

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
