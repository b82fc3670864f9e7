"""Helpers shared by the generators and the loaders of ``skbandit.datasets``.

The loaders' shared logic: the cache folder (:func:`get_data_home`), atomic
downloads and npz writes, local-file checks, the cache file built on first use
(:func:`_cached_file`), the absent cache of a scikit-learn fetcher reported as
a clear error (:func:`_missing_cache_error`), the final shuffle, and the
docstring fragments of their common parameters.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import os
import shutil
import tempfile
import urllib.request
from numbers import Integral
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import sklearn.datasets
from sklearn.utils import Bunch

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

__all__ = ["get_data_home"]

_SUBSETS = ("all", "train", "test")
PathLike = str | os.PathLike

#: docstring fragments of the loaders' common parameters (``fill_doc``)
_LOADER_DOCS = {
    "shuffle": """\
shuffle : bool, default=False
    Shuffle the rows (``numpy.random.default_rng(random_state)``).""",
    "seed_and_return": """\
random_state : int, numpy.random.Generator, RandomState or None, \
default=None
    Seed of the shuffle.
return_X_y : bool, default=False
    Return ``(data, target)`` instead of a Bunch.""",
}


def get_data_home(data_home: str | os.PathLike | None = None) -> Path:
    """Folder where skbandit keeps the data sets it downloads or converts.

    It is the ``skbandit`` sub-folder of scikit-learn's data home
    (:func:`sklearn.datasets.get_data_home`): ``data_home`` when given, else
    the ``SCIKIT_LEARN_DATA`` environment variable, else ``~/scikit_learn_data``.
    The loaders that delegate to a scikit-learn fetcher pass ``data_home`` to it
    unchanged, so the raw files cached by scikit-learn are shared with it.

    Parameters
    ----------
    data_home : str or path-like, default=None
        scikit-learn data home; ``None`` means scikit-learn's default.

    Returns
    -------
    path : pathlib.Path
        ``<data_home>/skbandit``. The folder is not created here; the loaders
        create it when they first write to it.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from skbandit.datasets import get_data_home
    >>> home = tempfile.mkdtemp()
    >>> get_data_home(home) == Path(home) / "skbandit"
    True
    """
    return Path(sklearn.datasets.get_data_home(data_home)) / "skbandit"


def _make_rng(random_state) -> np.random.Generator:
    """A ``numpy.random.Generator`` from None, an int, a Generator or a RandomState.

    A ``RandomState`` ``r`` gives ``default_rng(r.randint(2**31 - 1))``, the
    convention of the skbandit estimators.
    """
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(2**31 - 1))
    if random_state is None or isinstance(random_state, np.random.Generator):
        return np.random.default_rng(random_state)
    if isinstance(random_state, Integral):
        return np.random.default_rng(int(random_state))
    raise ValueError(
        "random_state must be None, an int, a numpy.random.Generator or a "
        f"numpy.random.RandomState; got {random_state!r}."
    )


def _check_int(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an int; got {type(value).__name__}.")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}; got {value}.")
    return int(value)


def _check_choice(value, name: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}; got {value!r}.")
    return value


def _finish(
    bunch: Bunch, *, shuffle: bool, random_state, return_X_y: bool
) -> Bunch | tuple:
    """Shuffle the rows of ``bunch`` (data, target, extra row arrays) and return.

    The permutation is applied to ``data``, ``target`` and every other entry
    listed in ``bunch["_row_keys"]`` (removed from the result).
    """
    row_keys = bunch.pop("_row_keys", ())
    if shuffle:
        n = len(bunch.target)
        perm = _make_rng(random_state).permutation(n)
        for key in ("data", "target", *row_keys):
            value = bunch[key]
            if isinstance(value, list):
                bunch[key] = [value[i] for i in perm]
            else:
                bunch[key] = value[perm]
    if return_X_y:
        return bunch.data, bunch.target
    return bunch


def _missing_error(name: str, where: Path, hint: str) -> OSError:
    return OSError(
        f"{name} not found in the cache {where} and download_if_missing=False. "
        f"Call again with download_if_missing=True to download it, or pass "
        f"path=... to load a local copy ({hint})."
    )


def _file_digest(path: Path, algorithm: str) -> str:
    h = hashlib.new(algorithm, usedforsecurity=False)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _urlretrieve(url: str, filename: Path) -> None:
    """Download ``url`` to ``filename`` (a thin wrapper, patched by the tests)."""
    with (
        urllib.request.urlopen(url, timeout=60) as response,
        open(filename, "wb") as out,
    ):
        shutil.copyfileobj(response, out)


def _download(url: str, folder: Path, filename: str, md5: str | None) -> Path:
    """Download ``url`` into ``folder/filename``, checking its MD5 when given.

    The file is written to a temporary name first and renamed once complete,
    so an interrupted download never leaves a truncated file in the cache.
    """
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / filename
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{filename}.")
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        _urlretrieve(url, tmp_path)
        if md5 is not None:
            digest = _file_digest(tmp_path, "md5")
            if digest != md5:
                raise OSError(
                    f"The file downloaded from {url} has MD5 {digest}, expected "
                    f"{md5}: the download is corrupted or the remote file changed."
                )
        os.replace(tmp_path, target)
    finally:
        tmp_path.unlink(missing_ok=True)
    return target


def _save_npz_atomic(path: Path, **arrays) -> None:
    """``numpy.savez_compressed`` to a temporary file renamed into ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".npz")
    os.close(fd)
    try:
        np.savez_compressed(tmp, **arrays)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


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


def _cached_file(
    data_home: PathLike | None,
    filename: str,
    build: Callable[[Path], object],
    *,
    download_if_missing: bool,
    name: str,
    hint: str,
) -> Path:
    """The cache file ``filename`` of skbandit's data home, built when absent.

    Parameters
    ----------
    data_home : str or path-like or None
        scikit-learn data home; the cache is
        ``get_data_home(data_home) / filename``.
    filename : str
        Name of the cache file in that folder.
    build : callable
        ``build(cache)`` downloads or converts the data and writes the file
        ``cache`` (its folder may not exist yet); called only when the file
        is absent and ``download_if_missing`` is True.
    download_if_missing : bool
        If False, an absent cache raises instead of calling ``build``.
    name, hint : str
        The data set and the local copy ``path=`` accepts, for the error.

    Returns
    -------
    cache : pathlib.Path
        The path of the cache file, which exists.

    Raises
    ------
    OSError
        The cache is absent and ``download_if_missing`` is False.
    """
    folder = get_data_home(data_home)
    cache = folder / filename
    if not cache.is_file():
        if not download_if_missing:
            raise _missing_error(name, folder, hint)
        build(cache)
    return cache


@contextlib.contextmanager
def _missing_cache_error(
    name: str,
    hint: str,
    download_if_missing: bool,
    *,
    data_home: PathLike | None = None,
    where: Path | None = None,
) -> Iterator[None]:
    """Report the absent cache of a scikit-learn fetcher called in the block.

    Wraps a ``sklearn.datasets.fetch_*`` call made with ``download_if_missing``:
    when that is False, the ``OSError`` the fetcher raises for an absent cache
    becomes the error of :func:`_missing_error`; when it is True, errors
    propagate unchanged.

    Parameters
    ----------
    name, hint : str
        The data set and the local copy ``path=`` accepts, for the error.
    download_if_missing : bool
        The value passed to the fetcher.
    data_home : str or path-like, default=None
        scikit-learn data home; the error names it when ``where`` is None.
    where : pathlib.Path, default=None
        The cache folder the error names, instead of scikit-learn's data home.

    Yields
    ------
    None
    """
    try:
        yield
    except OSError as exc:
        if download_if_missing:
            raise
        if where is None:
            where = Path(sklearn.datasets.get_data_home(data_home))
        raise _missing_error(name, where, hint) from exc
