"""Loader of the forest covertype data (scikit-learn's fetcher or a CSV file)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import sklearn.datasets
from sklearn.utils import Bunch

from skbandit._docstring import fill_doc
from skbandit.datasets._base import (
    _LOADER_DOCS,
    PathLike,
    _existing_file,
    _finish,
    _missing_cache_error,
    _open_maybe_gzip,
)

if TYPE_CHECKING:
    from skbandit._typing import RandomStateLike

__all__ = ["fetch_covtype"]

_COVTYPE_DESCR = """\
Forest covertype (Blackard and Dean, 1999)
------------------------------------------
581,012 30x30 m cells of Roosevelt National Forest, Colorado; 54 features
(10 quantitative, 4 binary wilderness areas, 40 binary soil types); 7 classes
(1 Spruce/Fir, 2 Lodgepole Pine, 3 Ponderosa Pine, 4 Cottonwood/Willow,
5 Aspen, 6 Douglas-fir, 7 Krummholz). UCI Machine Learning Repository,
license CC BY 4.0. Used by Beygelzimer, Orabona and Zhang (2017) in the
LIBSVM version "covtype.scale" (every feature min-max scaled to [0, 1]).
"""


def _min_max_scale(X: np.ndarray) -> np.ndarray:
    low = X.min(axis=0)
    span = X.max(axis=0) - low
    return (X - low) / np.where(span > 0, span, 1.0)


def _covtype_from_csv(path: Path) -> tuple[np.ndarray, np.ndarray, list[str]]:
    with _open_maybe_gzip(path, "rt", encoding="utf-8") as f:
        header = f.readline().strip().split(",")
        table = np.loadtxt(f, delimiter=",", ndmin=2)
    if "Cover_Type" not in header:
        raise ValueError(
            f"{path}: the header has no 'Cover_Type' column (the label); got "
            f"{header[:3]}...{header[-3:]}."
        )
    if table.shape[1] != len(header):
        raise ValueError(
            f"{path}: {len(header)} column names but {table.shape[1]} columns."
        )
    label = header.index("Cover_Type")
    y = table[:, label]
    if not np.array_equal(y, np.rint(y)):
        raise ValueError(f"{path}: the Cover_Type column is not integral.")
    X = np.delete(table, label, axis=1)
    names = header[:label] + header[label + 1 :]
    return X, y.astype(np.int64), names


@fill_doc(**_LOADER_DOCS)
def fetch_covtype(
    *,
    path: PathLike | None = None,
    scale: bool = False,
    data_home: PathLike | None = None,
    download_if_missing: bool = True,
    shuffle: bool = False,
    random_state: RandomStateLike = None,
    return_X_y: bool = False,
) -> Bunch | tuple[np.ndarray, np.ndarray]:
    """Load the forest covertype data (581,012 x 54, 7 classes).

    =================   ======================================
    Classes             7 (labels 1-7)
    Samples total       581,012
    Dimensionality      54
    Features            int-valued; in [0, 1] with ``scale=True``
    =================   ======================================

    Parameters
    ----------
    path : str or path-like, default=None
        A local CSV file (optionally gzip-compressed) with a header row and
        a label column named ``Cover_Type``; the other columns are the
        features, in file order. When given, nothing is downloaded.
    scale : bool, default=False
        Min-max scale every feature to [0, 1] over the loaded rows:
        ``(x - min) / (max - min)``, constant columns become 0. On the full
        data set this reproduces LIBSVM's ``covtype.scale``, the version
        used by Beygelzimer, Orabona and Zhang (2017); on a subset (a local
        file) the minima and maxima are those of the subset. Default False
        returns the raw UCI values, as ``sklearn.datasets.fetch_covtype``.
    data_home : str or path-like, default=None
        scikit-learn data home, passed to ``sklearn.datasets.fetch_covtype``
        when ``path`` is None (the data are cached by scikit-learn).
    download_if_missing : bool, default=True
        If False, raise an ``OSError`` when scikit-learn's cache is absent.
    {shuffle}
    {seed_and_return}

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` ndarray (n, 54) float64, ``target`` ndarray (n,) int64 with
        values 1-7, ``feature_names`` (list of 54 str), ``DESCR``.
    (data, target) : tuple if ``return_X_y`` is True

    References
    ----------
    .. [1] J. A. Blackard and D. J. Dean. "Comparative accuracies of
       artificial neural networks and discriminant analysis in predicting
       forest cover types from cartographic variables." Computers and
       Electronics in Agriculture 24(3), pp. 131-151, 1999.
    .. [2] A. Beygelzimer, F. Orabona and C. Zhang. "Efficient online bandit
       multiclass learning with O(sqrt(T)) regret." ICML 2017.

    Examples
    --------
    >>> import os, tempfile
    >>> from skbandit.datasets import fetch_covtype
    >>> file = os.path.join(tempfile.mkdtemp(), "covtype.csv")
    >>> with open(file, "w") as f:
    ...     _ = f.write("Elevation,Slope,Cover_Type\\n2000,10,2\\n3000,30,1\\n")
    >>> cov = fetch_covtype(path=file, scale=True)
    >>> cov.data.tolist(), cov.target.tolist(), cov.feature_names
    ([[0.0, 0.0], [1.0, 1.0]], [2, 1], ['Elevation', 'Slope'])
    >>> X, y = fetch_covtype(return_X_y=True)  # doctest: +SKIP
    >>> X.shape  # doctest: +SKIP
    (581012, 54)
    """
    if path is not None:
        X, y, names = _covtype_from_csv(_existing_file(path, "fetch_covtype(path=...)"))
    else:
        with _missing_cache_error(
            "Covertype",
            "a CSV with Cover_Type",
            download_if_missing,
            data_home=data_home,
        ):
            cov = sklearn.datasets.fetch_covtype(
                data_home=data_home, download_if_missing=download_if_missing
            )
        X = np.asarray(cov.data, dtype=np.float64)
        y = np.asarray(cov.target).astype(np.int64)
        names = list(cov.get("feature_names", [f"x{i}" for i in range(X.shape[1])]))
    if scale:
        X = _min_max_scale(X)
    bunch = Bunch(data=X, target=y, feature_names=names, DESCR=_COVTYPE_DESCR)
    return _finish(
        bunch, shuffle=shuffle, random_state=random_state, return_X_y=return_X_y
    )
