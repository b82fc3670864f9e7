"""Loaders of the real data sets used by the bandit multiclass papers.

Every loader reads a local copy when given ``path=...`` (no network access at
all), and otherwise downloads and caches the data set like the
``sklearn.datasets.fetch_*`` functions: either by delegating to the
scikit-learn fetcher (MNIST through OpenML, Covertype, 20 Newsgroups, RCV1),
or by downloading the public files itself (USPS). Converted copies are cached
in ``get_data_home(data_home)``, the ``skbandit`` sub-folder of scikit-learn's
data home.

Rows are returned in the order of the source (the *stream order*: training
rows first, then test rows) unless ``shuffle=True``.
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
import sklearn.datasets
from sklearn.utils import Bunch

from skbandit.datasets._base import (
    _check_choice,
    _download,
    _finish,
    _missing_error,
    _save_npz_atomic,
    get_data_home,
)

if TYPE_CHECKING:
    from skbandit._typing import RandomStateLike

__all__ = [
    "fetch_20newsgroups",
    "fetch_covtype",
    "fetch_mnist",
    "fetch_rcv1_reuters4",
    "fetch_usps",
]

_SUBSETS = ("all", "train", "test")
PathLike = str | os.PathLike


def _open_maybe_gzip(path: Path, mode: str = "rb", **kwargs):
    """Open ``path``, decompressing it when it starts with the gzip magic bytes."""
    with open(path, "rb") as f:
        is_gzip = f.read(2) == b"\x1f\x8b"
    return (gzip.open if is_gzip else open)(path, mode, **kwargs)


def _existing_file(path: PathLike, what: str) -> Path:
    path = Path(path).expanduser()
    if not path.is_file():
        raise FileNotFoundError(f"{what}: no such file {path}.")
    return path


def _reraise_missing(exc: OSError, name: str, data_home, hint: str):
    where = Path(sklearn.datasets.get_data_home(data_home))
    raise _missing_error(name, where, hint) from exc


# ---------------------------------------------------------------------------
# USPS
# ---------------------------------------------------------------------------

# The LIBSVM copies of USPS (also used by torchvision.datasets.USPS, whose MD5
# sums these are): labels 1..10 for the digits 0..9, pixels scaled to [-1, 1].
_USPS_REMOTES = (
    (
        "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass/usps.bz2",
        "usps.bz2",
        "ec16c51db3855ca6c91edd34d0e9b197",
    ),
    (
        "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass/usps.t.bz2",
        "usps.t.bz2",
        "8ea070ee2aca1ac39742fdd1ef5ed118",
    ),
)
_USPS_CACHE = "usps.npz"

_USPS_DESCR = """\
USPS handwritten digits (Hull, 1994)
------------------------------------
9,298 grey-level 16x16 images of digits scanned from envelopes by the U.S.
Postal Service: 7,291 training and 2,007 test images, 256 features with pixel
values in [0, 1], 10 classes (the digits 0-9). Used by Chen et al. (2009).
Downloaded from the LIBSVM data sets page (values in [-1, 1] there, mapped to
[0, 1] by (v + 1) / 2; labels 1-10 there, mapped to the digits 0-9).
Reference: J. J. Hull, "A database for handwritten text recognition
research", IEEE TPAMI 16(5), 1994. No explicit license; distributed for
research use.
"""


def _download_usps(folder: Path) -> Path:
    """Download the two LIBSVM USPS files and convert them to the npz cache."""
    arrays = {}
    for (url, filename, md5), split in zip(
        _USPS_REMOTES, ("train", "test"), strict=True
    ):
        file = _download(url, folder, filename, md5)
        try:
            X, y = sklearn.datasets.load_svmlight_file(str(file), n_features=256)
        finally:
            file.unlink(missing_ok=True)
        arrays[f"X_{split}"] = ((X.toarray() + 1.0) / 2.0).astype(np.float32)
        arrays[f"y_{split}"] = (np.rint(y) - 1).astype(np.int8)
    cache = folder / _USPS_CACHE
    _save_npz_atomic(cache, **arrays)
    return cache


def fetch_usps(
    *,
    path: PathLike | None = None,
    subset: str = "all",
    data_home: PathLike | None = None,
    download_if_missing: bool = True,
    shuffle: bool = False,
    random_state: RandomStateLike = None,
    return_X_y: bool = False,
) -> Bunch | tuple[np.ndarray, np.ndarray]:
    """Load the USPS handwritten digits (9,298 x 256, 10 classes).

    =================   ======================================
    Classes             10 (digits 0-9)
    Samples total       9,298 (7,291 train + 2,007 test)
    Dimensionality      256 (16 x 16 pixels)
    Features            real, in [0, 1]
    =================   ======================================

    Parameters
    ----------
    path : str or path-like, default=None
        A local ``.npz`` file with the arrays ``X_train`` (7291, 256),
        ``y_train``, ``X_test`` (2007, 256) and ``y_test`` (pixels in [0, 1],
        labels 0-9): the format of skbandit's cache and of the offline copy
        used by the tests. When given, nothing is downloaded or cached.
    subset : {"all", "train", "test"}, default="all"
        Which rows; ``"all"`` streams the training rows, then the test rows.
    data_home : str or path-like, default=None
        scikit-learn data home; the cache is ``<data_home>/skbandit/usps.npz``
        (see :func:`get_data_home`).
    download_if_missing : bool, default=True
        If False, raise an ``OSError`` when the cache is absent instead of
        downloading. The download fetches ``usps.bz2`` and ``usps.t.bz2``
        from the LIBSVM data sets page
        (https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass/),
        checks their MD5 sums and converts them: pixels ``(v + 1) / 2``,
        labels ``label - 1``. If that page is unreachable, download the two
        files by other means, convert them the same way into the npz format
        above, and pass ``path=``.
    shuffle : bool, default=False
        Shuffle the rows (``numpy.random.default_rng(random_state)``).
    random_state : int, numpy.random.Generator, RandomState or None, \
default=None
        Seed of the shuffle.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` ndarray (n, 256) float64, ``target`` ndarray (n,) int64,
        ``target_names`` (the digits 0-9), ``DESCR``.
    (data, target) : tuple if ``return_X_y`` is True

    References
    ----------
    .. [1] J. J. Hull. "A database for handwritten text recognition research."
       IEEE Transactions on Pattern Analysis and Machine Intelligence 16(5),
       pp. 550-554, 1994.
    .. [2] G. Chen, G. Chen, J. Zhang, S. Chen and C. Zhang. "Beyond Banditron:
       a conservative and efficient reduction for online multiclass prediction
       with bandit setting model." ICDM 2009 (USPS experiments).

    Examples
    --------
    Any npz file in the documented format:

    >>> import os, tempfile
    >>> import numpy as np
    >>> from skbandit.datasets import fetch_usps
    >>> tmp = tempfile.mkdtemp()
    >>> file = os.path.join(tmp, "usps.npz")
    >>> np.savez(file, X_train=np.zeros((3, 256)), y_train=[0, 1, 2],
    ...          X_test=np.ones((2, 256)), y_test=[9, 8])
    >>> usps = fetch_usps(path=file)
    >>> usps.data.shape, usps.target.tolist()
    ((5, 256), [0, 1, 2, 9, 8])

    The full data set (downloaded once, then read from the cache):

    >>> X, y = fetch_usps(return_X_y=True)  # doctest: +SKIP
    >>> X.shape  # doctest: +SKIP
    (9298, 256)
    """
    _check_choice(subset, "subset", _SUBSETS)
    if path is not None:
        file = _existing_file(path, "fetch_usps(path=...)")
    else:
        folder = get_data_home(data_home)
        file = folder / _USPS_CACHE
        if not file.is_file():
            if not download_if_missing:
                raise _missing_error(
                    "USPS", folder, "an npz file with X_train, y_train, X_test, y_test"
                )
            file = _download_usps(folder)
    with np.load(file) as npz:
        missing = {"X_train", "y_train", "X_test", "y_test"} - set(npz.files)
        if missing:
            raise ValueError(
                f"{file} is not a USPS npz file: missing arrays {sorted(missing)}."
            )
        splits = ("train", "test") if subset == "all" else (subset,)
        X = np.vstack([np.asarray(npz[f"X_{s}"], dtype=np.float64) for s in splits])
        y = np.concatenate([np.asarray(npz[f"y_{s}"]) for s in splits])
    bunch = Bunch(
        data=X,
        target=y.astype(np.int64),
        target_names=np.arange(10),
        DESCR=_USPS_DESCR,
    )
    return _finish(
        bunch, shuffle=shuffle, random_state=random_state, return_X_y=return_X_y
    )


# ---------------------------------------------------------------------------
# MNIST
# ---------------------------------------------------------------------------

_MNIST_CACHE = "mnist.npz"
_MNIST_N_TRAIN = 60_000

_MNIST_DESCR = """\
MNIST handwritten digits (LeCun, Bottou, Bengio and Haffner, 1998)
------------------------------------------------------------------
70,000 grey-level 28x28 images (60,000 training then 10,000 test), 784
features scaled to [0, 1] (pixel / 255), 10 classes (the digits 0-9).
Used by Chen et al. (2009). Downloaded through OpenML (data set
"mnist_784", version 1) or read from the original IDX files. License:
CC BY-SA 3.0 (Y. LeCun and C. Cortes).
"""


def _read_idx(path: Path) -> np.ndarray:
    """An unsigned-byte IDX array (gzip-compressed or not)."""
    with _open_maybe_gzip(path) as f:
        raw = f.read()
    if len(raw) < 4 or raw[:2] != b"\x00\x00" or raw[2] != 0x08:
        raise ValueError(f"{path} is not an unsigned-byte IDX file.")
    ndim = raw[3]
    header = 4 + 4 * ndim
    dims = [int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim)]
    data = np.frombuffer(raw, dtype=np.uint8, offset=header)
    if data.size != int(np.prod(dims)):
        raise ValueError(
            f"{path}: the IDX header announces shape {tuple(dims)} but the file "
            f"holds {data.size} values."
        )
    return data.reshape(dims)


def _mnist_pair(images: Path) -> tuple[np.ndarray, np.ndarray]:
    if "images-idx3" not in images.name:
        raise ValueError(
            f"{images.name}: expected an MNIST images file named like "
            "'t10k-images-idx3-ubyte.gz' (the labels file is found beside it)."
        )
    labels = images.with_name(images.name.replace("images-idx3", "labels-idx1"))
    if not labels.is_file():
        raise FileNotFoundError(
            f"The labels file {labels.name} was not found beside {images}."
        )
    X = _read_idx(images)
    y = _read_idx(labels)
    if X.ndim != 3 or y.ndim != 1 or len(X) != len(y):
        raise ValueError(
            f"{images.name} / {labels.name}: expected images (n, rows, cols) and "
            f"n labels; got shapes {X.shape} and {y.shape}."
        )
    return X.reshape(len(X), -1), y


def _mnist_find(folder: Path, prefix: str) -> Path:
    for name in (f"{prefix}-images-idx3-ubyte.gz", f"{prefix}-images-idx3-ubyte"):
        if (folder / name).is_file():
            return folder / name
    raise FileNotFoundError(
        f"{folder} holds no {prefix}-images-idx3-ubyte[.gz] file (and its "
        f"{prefix}-labels-idx1-ubyte[.gz])."
    )


def _mnist_from_path(path: Path, subset: str) -> tuple[np.ndarray, np.ndarray]:
    if path.is_dir():
        prefixes = {"all": ("train", "t10k"), "train": ("train",), "test": ("t10k",)}
        pairs = [_mnist_pair(_mnist_find(path, p)) for p in prefixes[subset]]
        return np.vstack([p[0] for p in pairs]), np.concatenate([p[1] for p in pairs])
    path = _existing_file(path, "fetch_mnist(path=...)")
    split = {"t10k": "test", "train": "train"}.get(path.name.split("-")[0])
    if subset not in ("all", split):
        raise ValueError(
            f"subset={subset!r} does not match the file {path.name}; pass the "
            "directory holding both MNIST files to choose a subset."
        )
    return _mnist_pair(path)


def _mnist_from_openml(data_home, download_if_missing: bool) -> Path:
    folder = get_data_home(data_home)
    cache = folder / _MNIST_CACHE
    if cache.is_file():
        return cache
    if not download_if_missing:
        raise _missing_error(
            "MNIST", folder, "an MNIST images IDX file or a directory of IDX files"
        )
    X, y = sklearn.datasets.fetch_openml(
        "mnist_784",
        version=1,
        data_home=data_home,
        as_frame=False,
        parser="liac-arff",
        return_X_y=True,
    )
    _save_npz_atomic(
        cache,
        X=np.asarray(X).astype(np.uint8),
        y=np.asarray(y).astype(np.int64).astype(np.uint8),
    )
    return cache


def fetch_mnist(
    *,
    path: PathLike | None = None,
    subset: str = "all",
    data_home: PathLike | None = None,
    download_if_missing: bool = True,
    shuffle: bool = False,
    random_state: RandomStateLike = None,
    return_X_y: bool = False,
) -> Bunch | tuple[np.ndarray, np.ndarray]:
    """Load the MNIST digits (70,000 x 784, 10 classes), pixels in [0, 1].

    =================   ======================================
    Classes             10 (digits 0-9)
    Samples total       70,000 (60,000 train + 10,000 test)
    Dimensionality      784 (28 x 28 pixels)
    Features            real, in [0, 1] (pixel / 255)
    =================   ======================================

    Parameters
    ----------
    path : str or path-like, default=None
        A local copy in the original IDX format (gzip-compressed or not):
        either an images file such as ``t10k-images-idx3-ubyte.gz``, whose
        labels file (``t10k-labels-idx1-ubyte.gz``) must lie beside it, or a
        directory holding ``train-*`` and/or ``t10k-*`` files. When given,
        nothing is downloaded or cached.
    subset : {"all", "train", "test"}, default="all"
        Which rows; ``"all"`` streams the 60,000 training rows, then the
        10,000 test rows. With a single file as ``path``, the file decides
        (``subset`` must be ``"all"`` or match it).
    data_home : str or path-like, default=None
        scikit-learn data home. Without ``path``, MNIST is fetched with
        ``sklearn.datasets.fetch_openml("mnist_784", version=1,
        data_home=data_home)`` and cached as
        ``<data_home>/skbandit/mnist.npz`` (uint8, compressed).
    download_if_missing : bool, default=True
        If False, raise an ``OSError`` when ``mnist.npz`` is absent from the
        cache instead of calling OpenML.
    shuffle : bool, default=False
        Shuffle the rows (``numpy.random.default_rng(random_state)``).
    random_state : int, numpy.random.Generator, RandomState or None, \
default=None
        Seed of the shuffle.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` ndarray (n, 784) float64 in [0, 1], ``target`` ndarray (n,)
        int64, ``target_names`` (the digits 0-9), ``DESCR``.
    (data, target) : tuple if ``return_X_y`` is True

    References
    ----------
    .. [1] Y. LeCun, L. Bottou, Y. Bengio and P. Haffner. "Gradient-based
       learning applied to document recognition." Proceedings of the IEEE
       86(11), 1998.

    Examples
    --------
    >>> from skbandit.datasets import fetch_mnist
    >>> X, y = fetch_mnist(return_X_y=True)  # doctest: +SKIP
    >>> X.shape, float(X.max())  # doctest: +SKIP
    ((70000, 784), 1.0)
    >>> test = fetch_mnist(path="t10k-images-idx3-ubyte.gz")  # doctest: +SKIP
    >>> test.data.shape  # doctest: +SKIP
    (10000, 784)
    """
    _check_choice(subset, "subset", _SUBSETS)
    if path is not None:
        X, y = _mnist_from_path(Path(path).expanduser(), subset)
    else:
        with np.load(_mnist_from_openml(data_home, download_if_missing)) as npz:
            X, y = npz["X"], npz["y"]
        if subset == "train":
            X, y = X[:_MNIST_N_TRAIN], y[:_MNIST_N_TRAIN]
        elif subset == "test":
            X, y = X[_MNIST_N_TRAIN:], y[_MNIST_N_TRAIN:]
    bunch = Bunch(
        data=X.astype(np.float64) / 255.0,
        target=y.astype(np.int64),
        target_names=np.arange(10),
        DESCR=_MNIST_DESCR,
    )
    return _finish(
        bunch, shuffle=shuffle, random_state=random_state, return_X_y=return_X_y
    )


# ---------------------------------------------------------------------------
# Covertype
# ---------------------------------------------------------------------------

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
    shuffle : bool, default=False
        Shuffle the rows (``numpy.random.default_rng(random_state)``).
    random_state : int, numpy.random.Generator, RandomState or None, \
default=None
        Seed of the shuffle.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

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
        try:
            cov = sklearn.datasets.fetch_covtype(
                data_home=data_home, download_if_missing=download_if_missing
            )
        except OSError as exc:
            if download_if_missing:
                raise
            _reraise_missing(exc, "Covertype", data_home, "a CSV with Cover_Type")
        X = np.asarray(cov.data, dtype=np.float64)
        y = np.asarray(cov.target).astype(np.int64)
        names = list(cov.get("feature_names", [f"x{i}" for i in range(X.shape[1])]))
    if scale:
        X = _min_max_scale(X)
    bunch = Bunch(data=X, target=y, feature_names=names, DESCR=_COVTYPE_DESCR)
    return _finish(
        bunch, shuffle=shuffle, random_state=random_state, return_X_y=return_X_y
    )


# ---------------------------------------------------------------------------
# 20 Newsgroups
# ---------------------------------------------------------------------------

_NEWSGROUPS_DESCR = """\
20 Newsgroups (Lang, 1995)
--------------------------
Usenet posts from 20 newsgroups: 18,846 documents in the "bydate" version of
scikit-learn's fetcher (11,314 train then 7,532 test), or 2,000 in the mini
version (100 posts per group, UCI KDD archive). Raw text; vectorise it, e.g.
with CountVectorizer(binary=True) for the binary features of Chen et al.
(2009). No explicit license; the posts are public Usenet messages.
"""


def _newsgroups_from_tsv(path: Path) -> tuple[list[str], list[str]]:
    labels, texts = [], []
    with _open_maybe_gzip(path, "rt", encoding="utf-8", newline="\n") as f:
        header = f.readline().rstrip("\r\n").split("\t")
        if header != ["label", "text"]:
            raise ValueError(f"{path}: expected the header 'label<TAB>text'.")
        for number, line in enumerate(f, start=2):
            line = line.rstrip("\r\n")
            if not line:
                continue
            label, sep, text = line.partition("\t")
            if not sep:
                raise ValueError(f"{path}, line {number}: no tab after the label.")
            labels.append(label)
            texts.append(text)
    return texts, labels


def fetch_20newsgroups(
    *,
    path: PathLike | None = None,
    subset: str = "all",
    remove: tuple = (),
    data_home: PathLike | None = None,
    download_if_missing: bool = True,
    shuffle: bool = False,
    random_state: RandomStateLike = None,
    return_X_y: bool = False,
) -> Bunch | tuple[list[str], np.ndarray]:
    """Load the 20 Newsgroups posts as raw text (18,846 docs, 20 classes).

    =================   ======================================
    Classes             20
    Samples total       18,846 (11,314 train + 7,532 test)
    Features            raw text (list of str)
    =================   ======================================

    Parameters
    ----------
    path : str or path-like, default=None
        A local tab-separated file (optionally gzip-compressed) with the
        header ``label<TAB>text`` and one post per line: the newsgroup name,
        a tab, the text (no tab or line break inside). The offline copy of
        the *mini* 20 Newsgroups (2,000 posts) has this format. When given,
        nothing is downloaded; ``subset`` must be ``"all"`` and ``remove``
        empty (such a file has no split, and its folded line breaks defeat
        scikit-learn's header/footer/quote stripping).
    subset : {"all", "train", "test"}, default="all"
        Which posts (scikit-learn's "bydate" split); ``"all"`` streams the
        training posts, then the test posts. Note that
        ``sklearn.datasets.fetch_20newsgroups`` defaults to ``"train"``.
    remove : tuple, default=()
        Passed to ``sklearn.datasets.fetch_20newsgroups``: any of
        ``"headers"``, ``"footers"``, ``"quotes"``.
    data_home : str or path-like, default=None
        scikit-learn data home, passed to
        ``sklearn.datasets.fetch_20newsgroups`` when ``path`` is None.
    download_if_missing : bool, default=True
        If False, raise an ``OSError`` when scikit-learn's cache is absent.
    shuffle : bool, default=False
        Shuffle the posts (``numpy.random.default_rng(random_state)``). The
        sources are grouped by newsgroup, a poor order for a stream: shuffle
        before online learning.
    random_state : int, numpy.random.Generator, RandomState or None, \
default=None
        Seed of the shuffle.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` list of str, ``target`` ndarray (n,) int64 of indices into
        ``target_names`` (the sorted newsgroup names), ``DESCR``.
    (data, target) : tuple if ``return_X_y`` is True

    References
    ----------
    .. [1] K. Lang. "NewsWeeder: learning to filter netnews." ICML 1995.
    .. [2] G. Chen et al. "Beyond Banditron: a conservative and efficient
       reduction for online multiclass prediction with bandit setting
       model." ICDM 2009 (20 Newsgroups experiments).

    Examples
    --------
    >>> import os, tempfile
    >>> from skbandit.datasets import fetch_20newsgroups
    >>> file = os.path.join(tempfile.mkdtemp(), "news.tsv")
    >>> with open(file, "w") as f:
    ...     _ = f.write("label\\ttext\\nsci.space\\tto the moon\\n"
    ...                 "rec.autos\\tnew tyres\\n")
    >>> news = fetch_20newsgroups(path=file)
    >>> news.data, news.target.tolist(), news.target_names
    (['to the moon', 'new tyres'], [1, 0], ['rec.autos', 'sci.space'])
    >>> news = fetch_20newsgroups(shuffle=True, random_state=0)  # doctest: +SKIP
    >>> len(news.data), len(news.target_names)  # doctest: +SKIP
    (18846, 20)
    """
    _check_choice(subset, "subset", _SUBSETS)
    if path is not None:
        if subset != "all" or remove:
            raise ValueError(
                "With path=..., subset must be 'all' and remove empty: a local "
                "TSV file has no train/test split and no line breaks to strip."
            )
        texts, labels = _newsgroups_from_tsv(
            _existing_file(path, "fetch_20newsgroups(path=...)")
        )
        names, target = np.unique(np.asarray(labels), return_inverse=True)
        target_names = names.tolist()
    else:
        try:
            news = sklearn.datasets.fetch_20newsgroups(
                data_home=data_home,
                subset=subset,
                remove=remove,
                shuffle=False,
                download_if_missing=download_if_missing,
            )
        except OSError as exc:
            if download_if_missing:
                raise
            _reraise_missing(exc, "20 Newsgroups", data_home, "a label<TAB>text TSV")
        texts, target = list(news.data), news.target
        target_names = list(news.target_names)
    bunch = Bunch(
        data=texts,
        target=np.asarray(target, dtype=np.int64),
        target_names=target_names,
        DESCR=_NEWSGROUPS_DESCR,
    )
    return _finish(
        bunch, shuffle=shuffle, random_state=random_state, return_X_y=return_X_y
    )


# ---------------------------------------------------------------------------
# RCV1 / Reuters4
# ---------------------------------------------------------------------------

_REUTERS4 = ("CCAT", "ECAT", "GCAT", "MCAT")
_RCV1_N_FEATURES = 47_236
# Rows of sklearn's fetch_rcv1(subset="all") before this index are the
# LYRL2004 training documents.
_RCV1_N_TRAIN = 23_149
_REUTERS4_CACHE = "rcv1_reuters4.npz"
_REUTERS4_KEYS = ("data", "indices", "indptr", "shape", "target", "sample_id")

_REUTERS4_DESCR = """\
Reuters4 (RCV1-v2, Lewis et al., 2004; Kakade et al., 2008)
-----------------------------------------------------------
The documents of RCV1-v2 (804,414 Reuters news stories, 1996-1997) with
exactly one of the four top-level topics CCAT (corporate/industrial), ECAT
(economics), GCAT (government/social) and MCAT (markets): 665,265 documents
in the paper of Beygelzimer, Orabona and Zhang (2017), 47,236 tf-idf features
(cosine-normalised, scikit-learn's fetch_rcv1), 4 classes. The vectors are
the public online appendix of Lewis et al. (2004); the original texts are
distributed by NIST under a research agreement.
"""


def _reuters4_filter(rcv1: Bunch) -> dict[str, np.ndarray | sp.csr_matrix]:
    """Keep the documents with exactly one of CCAT/ECAT/GCAT/MCAT."""
    names = [str(n) for n in np.asarray(rcv1.target_names).ravel()]
    missing = [t for t in _REUTERS4 if t not in names]
    if missing:
        raise ValueError(f"The RCV1 topics lack {missing}.")
    columns = [names.index(t) for t in _REUTERS4]
    topics = rcv1.target[:, columns]
    topics = topics.toarray() if sp.issparse(topics) else np.asarray(topics)
    keep = np.flatnonzero((topics != 0).sum(axis=1) == 1)
    X = sp.csr_matrix(rcv1.data[keep])
    return {
        "X": X,
        "target": np.argmax(topics[keep] != 0, axis=1).astype(np.int8),
        "sample_id": np.asarray(rcv1.sample_id)[keep],
        "is_train": keep < _RCV1_N_TRAIN,
    }


def _reuters4_save(path: Path, parts: dict) -> None:
    X = parts["X"]
    _save_npz_atomic(
        path,
        data=X.data,
        indices=X.indices,
        indptr=X.indptr,
        shape=np.asarray(X.shape),
        target=parts["target"],
        sample_id=parts["sample_id"],
        is_train=parts["is_train"],
    )


def _reuters4_load(path: Path) -> dict:
    if path.suffix == ".npz":
        with np.load(path) as npz:
            missing = set(_REUTERS4_KEYS) - set(npz.files)
            if missing:
                raise ValueError(
                    f"{path} is not a Reuters4 npz file: missing {sorted(missing)}."
                )
            X = sp.csr_matrix(
                (npz["data"], npz["indices"], npz["indptr"]),
                shape=tuple(npz["shape"]),
            )
            n = X.shape[0]
            return {
                "X": X,
                "target": npz["target"],
                "sample_id": npz["sample_id"],
                "is_train": npz["is_train"]
                if "is_train" in npz.files
                else np.zeros(n, dtype=bool),
            }
    X, y = sklearn.datasets.load_svmlight_file(
        str(path), n_features=_RCV1_N_FEATURES, zero_based=True
    )
    if not np.isin(y, np.arange(4)).all():
        raise ValueError(f"{path}: the svmlight labels must be the codes 0-3.")
    n = X.shape[0]
    return {
        "X": X,
        "target": y.astype(np.int8),
        "sample_id": np.arange(n),
        "is_train": None,
    }


def fetch_rcv1_reuters4(
    *,
    path: PathLike | None = None,
    subset: str = "all",
    data_home: PathLike | None = None,
    download_if_missing: bool = True,
    shuffle: bool = False,
    random_state: RandomStateLike = None,
    return_X_y: bool = False,
) -> Bunch | tuple[sp.csr_matrix, np.ndarray]:
    """Load Reuters4: the RCV1 documents with exactly one top-level topic.

    =================   ======================================
    Classes             4 (0 CCAT, 1 ECAT, 2 GCAT, 3 MCAT)
    Samples total       665,265 (Beygelzimer et al., 2017)
    Dimensionality      47,236
    Features            real, tf-idf, rows of unit norm; sparse
    =================   ======================================

    Without ``path``, calls ``sklearn.datasets.fetch_rcv1(subset="all",
    data_home=data_home)`` (RCV1-v2, 804,414 documents, 103 topics, where a
    document's topics include the ancestors of its topics), keeps the
    documents with exactly one of CCAT, ECAT, GCAT and MCAT among their
    topics, labels each with that topic, and caches the result as
    ``<data_home>/skbandit/rcv1_reuters4.npz``.

    Parameters
    ----------
    path : str or path-like, default=None
        A local copy, either

        - an ``.npz`` file in the format of skbandit's cache: the CSR arrays
          ``data``, ``indices``, ``indptr`` and ``shape`` of the features,
          ``target`` (codes 0-3 in the order CCAT, ECAT, GCAT, MCAT),
          ``sample_id`` (RCV1 document ids) and optionally ``is_train``
          (bool, LYRL2004 training document); or
        - an svmlight/LIBSVM file (any other suffix; ``.gz``/``.bz2``
          compressed allowed) with zero-based feature indices and the label
          codes 0-3, e.g. written by ``sklearn.datasets.dump_svmlight_file``.

        When given, nothing is downloaded or cached.
    subset : {"all", "train", "test"}, default="all"
        Which rows (LYRL2004 chronological split, 23,149 training documents
        of RCV1 before filtering); ``"all"`` streams the training rows, then
        the test rows. An svmlight ``path`` only supports ``"all"``.
    data_home : str or path-like, default=None
        scikit-learn data home (see :func:`get_data_home`).
    download_if_missing : bool, default=True
        If False, raise an ``OSError`` when neither skbandit's cache nor
        scikit-learn's RCV1 cache is present.
    shuffle : bool, default=False
        Shuffle the rows (``numpy.random.default_rng(random_state)``).
    random_state : int, numpy.random.Generator, RandomState or None, \
default=None
        Seed of the shuffle.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` csr_matrix (n, 47236) float64, ``target`` ndarray (n,)
        int64 in 0-3, ``target_names`` ``["CCAT", "ECAT", "GCAT", "MCAT"]``,
        ``sample_id`` ndarray (n,), ``DESCR``.
    (data, target) : tuple if ``return_X_y`` is True

    References
    ----------
    .. [1] D. D. Lewis, Y. Yang, T. G. Rose and F. Li. "RCV1: a new benchmark
       collection for text categorization research." JMLR 5, pp. 361-397,
       2004.
    .. [2] S. M. Kakade, S. Shalev-Shwartz and A. Tewari. "Efficient bandit
       algorithms for online multiclass prediction." ICML 2008.
    .. [3] A. Beygelzimer, F. Orabona and C. Zhang. "Efficient online bandit
       multiclass learning with O(sqrt(T)) regret." ICML 2017.

    Examples
    --------
    >>> from skbandit.datasets import fetch_rcv1_reuters4
    >>> reuters = fetch_rcv1_reuters4()  # doctest: +SKIP
    >>> reuters.data.shape, reuters.target_names  # doctest: +SKIP
    ((665265, 47236), ['CCAT', 'ECAT', 'GCAT', 'MCAT'])
    """
    _check_choice(subset, "subset", _SUBSETS)
    if path is not None:
        parts = _reuters4_load(_existing_file(path, "fetch_rcv1_reuters4(path=...)"))
    else:
        folder = get_data_home(data_home)
        cache = folder / _REUTERS4_CACHE
        if cache.is_file():
            parts = _reuters4_load(cache)
        else:
            try:
                rcv1 = sklearn.datasets.fetch_rcv1(
                    data_home=data_home,
                    subset="all",
                    download_if_missing=download_if_missing,
                )
            except OSError as exc:
                if download_if_missing:
                    raise
                raise _missing_error(
                    "Reuters4 (and scikit-learn's RCV1 files)",
                    folder,
                    "a Reuters4 npz or svmlight file",
                ) from exc
            parts = _reuters4_filter(rcv1)
            _reuters4_save(cache, parts)
    X, y, sample_id = parts["X"], parts["target"], parts["sample_id"]
    if subset != "all":
        if parts["is_train"] is None:
            raise ValueError(
                f"subset={subset!r} needs the train/test split, which an "
                "svmlight file does not record; use subset='all'."
            )
        rows = parts["is_train"] if subset == "train" else ~parts["is_train"]
        X, y, sample_id = X[rows], y[rows], sample_id[rows]
    bunch = Bunch(
        data=X,
        target=np.asarray(y, dtype=np.int64),
        target_names=list(_REUTERS4),
        sample_id=sample_id,
        DESCR=_REUTERS4_DESCR,
        _row_keys=("sample_id",),
    )
    return _finish(
        bunch, shuffle=shuffle, random_state=random_state, return_X_y=return_X_y
    )
