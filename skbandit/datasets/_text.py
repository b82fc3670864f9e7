"""Loaders of the text corpora: 20 Newsgroups (raw posts) and Reuters4 (the
tf-idf vectors of RCV1).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
import sklearn.datasets
from sklearn.utils import Bunch

from skbandit._docstring import fill_doc
from skbandit.datasets._base import (
    _LOADER_DOCS,
    _SUBSETS,
    PathLike,
    _check_choice,
    _existing_file,
    _finish,
    _missing_cache_error,
    _open_maybe_gzip,
    _save_npz_atomic,
    get_data_home,
)

if TYPE_CHECKING:
    from skbandit._typing import RandomStateLike

__all__ = ["fetch_20newsgroups", "fetch_rcv1_reuters4"]

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


@fill_doc(**_LOADER_DOCS)
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
    {seed_and_return}

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
        with _missing_cache_error(
            "20 Newsgroups",
            "a label<TAB>text TSV",
            download_if_missing,
            data_home=data_home,
        ):
            news = sklearn.datasets.fetch_20newsgroups(
                data_home=data_home,
                subset=subset,
                remove=remove,
                shuffle=False,
                download_if_missing=download_if_missing,
            )
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


@fill_doc(**_LOADER_DOCS)
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
    {shuffle}
    {seed_and_return}

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
            with _missing_cache_error(
                "Reuters4 (and scikit-learn's RCV1 files)",
                "a Reuters4 npz or svmlight file",
                download_if_missing,
                where=folder,
            ):
                rcv1 = sklearn.datasets.fetch_rcv1(
                    data_home=data_home,
                    subset="all",
                    download_if_missing=download_if_missing,
                )
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
