"""Data sets of the experiments, by name.

Generated streams need nothing; real data sets are read from a local folder
(``data_dir``, holding the files named below, e.g. the offline copies in
``../shared/data``) or, without one, through the loaders' cache
(``skbandit.datasets.fetch_*``, which download when missing). Real data sets
are played in one fixed shuffled order (seed 0), the same for every learner.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = [
    "DATASETS",
    "PREPROCESSING",
    "DatasetUnavailable",
    "load_dataset",
    "missing_data_advice",
    "preprocess",
]

#: Row preprocessing choices of the experiments (see :func:`preprocess`).
PREPROCESSING = ("stored", "unit-range", "unit-norm")


class DatasetUnavailable(RuntimeError):
    """A real data set has no local copy (or could not be loaded): skip it.

    ``datasets`` names the data sets concerned (one for a single load, every
    configured one when a run could load none of them).
    """

    def __init__(self, message: str, datasets: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.datasets = tuple(datasets)


@dataclass(frozen=True)
class DatasetInfo:
    name: str
    description: str
    files: tuple[str, ...]  # file names looked up in data_dir (first found)
    generated: bool


def _find(data_dir, files: tuple[str, ...], name: str) -> Path | None:
    if data_dir is None:
        return None
    folder = Path(data_dir)
    for file in files:
        if (folder / file).exists():
            return folder / file
    raise DatasetUnavailable(
        f"data set {name!r}: no local copy in {folder} (looked for "
        + ", ".join(files)
        + ")",
        (name,),
    )


def _synsep(n, data_dir, download):
    from skbandit.datasets import make_synsep

    return make_synsep(n or 1_000_000, sparse=True, random_state=0)


def _synnonsep(n, data_dir, download):
    from skbandit.datasets import make_synnonsep

    return make_synnonsep(n or 1_000_000, sparse=True, random_state=0)


def _separable(strong: bool):
    def load(n, data_dir, download):
        from skbandit.datasets import make_separable_stream

        return make_separable_stream(n or 1_000_000, strong=strong, random_state=0)

    return load


def _fetched(key: str, fetcher: str, **options):
    """The loader of the real data set ``key``: ``skbandit.datasets.<fetcher>``
    on the first of its files found in ``data_dir`` (else its download),
    shuffled with seed 0."""

    def load(n, data_dir, download):
        from skbandit import datasets

        path = _find(data_dir, DATASETS[key].files, key)
        return getattr(datasets, fetcher)(
            path=path,
            download_if_missing=download,
            shuffle=True,
            random_state=0,
            return_X_y=True,
            **options,
        )

    return load


def _newsgroups(tfidf: bool):
    def load(n, data_dir, download):
        from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

        from skbandit.datasets import fetch_20newsgroups

        path = _find(data_dir, DATASETS["20newsgroups"].files, "20newsgroups")
        bunch = fetch_20newsgroups(
            path=path, download_if_missing=download, shuffle=True, random_state=0
        )
        vectorizer = (
            TfidfVectorizer(min_df=2)
            if tfidf
            else CountVectorizer(binary=True, min_df=2)
        )
        X = vectorizer.fit_transform(bunch.data).astype(np.float64).tocsr()
        return X, np.asarray(bunch.target)

    return load


DATASETS: dict[str, DatasetInfo] = {
    "synsep": DatasetInfo(
        "synsep",
        "SynSep (Kakade et al. 2008): 400 binary features, 9 classes, "
        "separable; generated",
        (),
        True,
    ),
    "synnonsep": DatasetInfo(
        "synnonsep",
        "SynNonSep: SynSep with 5% of labels redrawn; generated",
        (),
        True,
    ),
    "separable-strong": DatasetInfo(
        "separable-strong",
        "strongly separable 3-class stream (Beygelzimer et al. 2019); generated",
        (),
        True,
    ),
    "separable-weak": DatasetInfo(
        "separable-weak",
        "weakly separable 3-class stream (Beygelzimer et al. 2019); generated",
        (),
        True,
    ),
    "usps": DatasetInfo(
        "usps", "USPS digits, 9,298 x 256, 10 classes", ("usps.npz",), False
    ),
    "mnist": DatasetInfo(
        "mnist",
        "MNIST digits, 70,000 x 784, 10 classes (pixels in [0, 1])",
        (
            "train-images-idx3-ubyte.gz",
            "t10k-images-idx3-ubyte.gz",
            "train-images-idx3-ubyte",
            "t10k-images-idx3-ubyte",
        ),
        False,
    ),
    "covtype": DatasetInfo(
        "covtype",
        "Covertype, 581,012 x 54, 7 classes, min-max scaled",
        ("covtype.csv.gz", "covtype.csv", "covtype_small.csv"),
        False,
    ),
    "20newsgroups": DatasetInfo(
        "20newsgroups",
        "20 Newsgroups, binary word features, 20 classes",
        ("20newsgroups.tsv.gz", "mini_newsgroups.tsv.gz"),
        False,
    ),
    "20newsgroups-tfidf": DatasetInfo(
        "20newsgroups-tfidf",
        "20 Newsgroups, tf-idf features, 20 classes",
        ("20newsgroups.tsv.gz", "mini_newsgroups.tsv.gz"),
        False,
    ),
    "reuters4": DatasetInfo(
        "reuters4",
        "RCV1 Reuters4 (CCAT/ECAT/GCAT/MCAT), tf-idf, 4 classes",
        (
            "rcv1_reuters4.npz",
            "reuters4.npz",
            "rcv1_reuters4.svm",
            "rcv1_reuters4.svm.gz",
        ),
        False,
    ),
}

_LOADERS: dict[str, Callable[..., Any]] = {
    "synsep": _synsep,
    "synnonsep": _synnonsep,
    "separable-strong": _separable(True),
    "separable-weak": _separable(False),
    "usps": _fetched("usps", "fetch_usps"),
    "mnist": _fetched("mnist", "fetch_mnist"),
    "covtype": _fetched("covtype", "fetch_covtype", scale=True),
    "20newsgroups": _newsgroups(False),
    "20newsgroups-tfidf": _newsgroups(True),
    "reuters4": _fetched("reuters4", "fetch_rcv1_reuters4"),
}


def missing_data_advice(
    names, *, data_dir, download: bool, data_dir_option: str, download_option: str
) -> str:
    """How to make the named real data sets available, in the caller's terms.

    ``data_dir_option`` and ``download_option`` name the caller's own ways to
    pass a folder and to allow downloads (``"data_dir=DIR"`` and
    ``"download=True"`` in Python, ``"--data-dir DIR"`` and "drop
    ``--no-download``" on the command line).
    """
    files = "; ".join(
        f"{name}: {' or '.join(DATASETS[name].files)}"
        for name in names
        if DATASETS[name].files
    )
    where = "another folder" if data_dir is not None else "a folder"
    advice = f"pass {data_dir_option} with {where} holding local copies ({files})"
    if data_dir is None and not download:
        advice += f", or {download_option} to download them"
    return advice


def preprocess(X, how: str):
    """Apply an experiment's preprocessing to a data set's rows.

    Parameters
    ----------
    X : ndarray or csr_matrix
    how : {"stored", "unit-range", "unit-norm"}
        ``"stored"``: the values as the loader returns them (USPS and MNIST
        pixels in ``[0, 1]``, 20 Newsgroups binary word indicators, RCV1
        cosine-normalised tf-idf); ``"unit-range"``: one affine map of all
        values onto ``[0, 1]``, ``(x - min) / (max - min)`` over the whole
        matrix (``x / max`` for sparse non-negative data, which keeps zeros at
        zero; a no-op on data already spanning ``[0, 1]``); ``"unit-norm"``:
        each row divided by its Euclidean norm (all-zero rows unchanged).

    Returns
    -------
    X : ndarray (float64) or csr_matrix
        A new array; the input is not modified.
    """
    if how not in PREPROCESSING:
        raise ValueError(
            f"preprocessing must be one of {', '.join(PREPROCESSING)}; got {how!r}"
        )
    if how == "stored":
        return X
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64, copy=True)
        X.sum_duplicates()
        if how == "unit-norm":
            norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
            norms[norms == 0.0] = 1.0
            X.data /= np.repeat(norms, np.diff(X.indptr))
            return X
        lo = min(X.data.min(initial=0.0), 0.0)
        if lo < 0.0:
            raise ValueError(
                "unit-range on a sparse matrix needs non-negative values "
                "(shifting would fill the zeros)"
            )
        hi = X.data.max(initial=0.0)
        if hi > 0.0:
            X.data /= hi
        return X
    X = np.array(X, dtype=np.float64)
    if how == "unit-norm":
        norms = np.linalg.norm(X, axis=1, keepdims=True)
        norms[norms == 0.0] = 1.0
        return X / norms
    if X.size == 0:
        return X
    lo, hi = X.min(), X.max()
    return (X - lo) / (hi - lo) if hi > lo else X - lo


def check_dataset_names(names) -> None:
    """Raise a ``KeyError`` naming the choices if any name is unknown."""
    unknown = [n for n in names if n not in DATASETS]
    if unknown:
        raise KeyError(
            f"unknown data set {unknown[0]!r}; choose from: " + ", ".join(DATASETS)
        )


def load_dataset(
    name: str,
    n_samples: int | None = None,
    *,
    data_dir: str | os.PathLike | None = None,
    download: bool = True,
) -> tuple[Any, np.ndarray]:
    """Load a data set of the experiments by name.

    Parameters
    ----------
    name : str
        A key of ``DATASETS``.
    n_samples : int or None
        Keep the first rows of the (fixed) order; None keeps all. Generated
        streams are generated at this length (10^6 when None).
    data_dir : path-like or None
        Folder with local copies of the real data sets; None reads the
        loaders' cache.
    download : bool, default=True
        Without ``data_dir``, let the loaders download a missing data set.

    Returns
    -------
    X : ndarray or csr_matrix
    y : ndarray

    Raises
    ------
    KeyError
        For an unknown name.
    DatasetUnavailable
        When a real data set has no local copy or cannot be loaded.

    Examples
    --------
    >>> from skbandit.experiments import load_dataset
    >>> X, y = load_dataset("synsep", 1000)
    >>> X.shape, sorted(set(y.tolist())) == list(range(9))
    ((1000, 400), True)
    """
    check_dataset_names([name])
    try:
        X, y = _LOADERS[name](n_samples, data_dir, download)
    except DatasetUnavailable:
        raise
    except (OSError, ValueError) as exc:
        if data_dir is None and not download:
            # The loaders' own message advises their keyword arguments
            # (download_if_missing, path); callers here have other names.
            message = f"data set {name!r} is not in the loaders' cache"
        elif data_dir is None:
            message = f"data set {name!r} could not be downloaded: {exc}"
        else:
            message = f"data set {name!r} could not be loaded: {exc}"
        raise DatasetUnavailable(message, (name,)) from exc
    if n_samples is not None and n_samples < len(y):
        X, y = X[:n_samples], y[:n_samples]
    if sp.issparse(X):
        X = sp.csr_matrix(X)
    return X, np.asarray(y)
