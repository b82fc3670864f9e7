"""Loaders of the handwritten digits: USPS (LIBSVM files) and MNIST (IDX
files or OpenML).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import sklearn.datasets
from sklearn.utils import Bunch

from skbandit._docstring import fill_doc
from skbandit.datasets._base import (
    _LOADER_DOCS,
    _SUBSETS,
    PathLike,
    _cached_file,
    _check_choice,
    _download,
    _existing_file,
    _finish,
    _open_maybe_gzip,
    _save_npz_atomic,
)

if TYPE_CHECKING:
    from skbandit._typing import RandomStateLike

__all__ = ["fetch_mnist", "fetch_usps"]

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


def _download_usps(cache: Path) -> None:
    """Download the two LIBSVM USPS files and convert them to the npz ``cache``."""
    folder = cache.parent
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
    _save_npz_atomic(cache, **arrays)


@fill_doc(**_LOADER_DOCS)
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
    {shuffle}
    {seed_and_return}

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
        file = _cached_file(
            data_home,
            _USPS_CACHE,
            _download_usps,
            download_if_missing=download_if_missing,
            name="USPS",
            hint="an npz file with X_train, y_train, X_test, y_test",
        )
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


def _mnist_from_openml(cache: Path, data_home: PathLike | None) -> None:
    """Fetch MNIST from OpenML and write it to the npz ``cache`` (uint8)."""
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


@fill_doc(**_LOADER_DOCS)
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
    {shuffle}
    {seed_and_return}

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
        cache = _cached_file(
            data_home,
            _MNIST_CACHE,
            functools.partial(_mnist_from_openml, data_home=data_home),
            download_if_missing=download_if_missing,
            name="MNIST",
            hint="an MNIST images IDX file or a directory of IDX files",
        )
        with np.load(cache) as npz:
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
