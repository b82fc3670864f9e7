"""The stream suite of the evidence protocol: TUNING and VALIDATION streams.

Defaults are chosen on ``TUNING`` only and reported on ``VALIDATION``, ``PROBE``,
``PROBE2`` and ``PROBE3`` (fresh streams added after a validation run,
report-only; disjoint sources: no data set, generator family setting or bundled
file is in both; ``PROBE2``'s generator families are used by no other suite but
``PROBE3``, later and report-only, which reuses the glyphs at other settings;
``PROBE3``: dense streams of 5 to 26 classes) and on the six ``vw-cbify`` streams
(``VW_CBIFY``, played in the experiment's own order).
Every stream is built offline: the shared copies in ``../shared/data`` (USPS,
MNIST t10k, covtype_small, mini 20 Newsgroups), scikit-learn's bundled data sets
(no download), and generated streams of different ``k``, class imbalance, label
noise, sparsity, feature scales and drift.

A stream is played once per seed ``s`` (0, 1, 2, ...): a real data set in the order
``numpy.random.default_rng(ORDER_BASE[suite] + s).permutation(n)``, a generated
stream drawn with ``random_state=ORDER_BASE[suite] + s``; the learner's own
``random_state`` is ``s``. The vw-cbify streams are the experiment's (order seed
0, SynSep and SynNonSep with ``random_state=0`` and 100,000 rounds), learner seeds
0, 1, 2.

    from streams import TUNING, VALIDATION, load_stream
    X, y = load_stream("digits", seed=0)

``vw_best(name, seed, X, y)`` is the smallest online error of Vowpal Wabbit's five
``--cbify`` configurations of the ``vw-cbify`` experiment on that stream and seed
(cached in a JSON file, ``--vw-cache``). Run this file to print the suite::

    python benchmarks/streams.py --data-dir ../shared/data

The drift stream of the drift benchmark (SynNonSep whose class prototypes are
redrawn every ``drift_every`` rounds) is too large to hold in memory at 5 million
rounds; ``drifting_synnonsep_chunks`` yields it segment by segment.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

DATA_DIR = os.environ.get(
    "SKBANDIT_DATA_DIR",
    os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "data"),
)
if not os.path.isdir(DATA_DIR):  # the main checkout: /work/main/../shared/data
    DATA_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")

ORDER_BASE = {
    "tuning": 100,
    "validation": 200,
    "probe": 300,
    "probe2": 400,
    "probe3": 500,
}


@dataclass(frozen=True)
class Stream:
    name: str
    suite: str  # "tuning", "validation" or "vw-cbify"
    source: str  # what it is made from
    build: Callable[[int, str], tuple]  # (stream seed, data_dir) -> (X, y)
    real: bool  # a fixed data set (permuted per seed) or a generator (drawn)


# ------------------------------------------------------------------ builders
def _sklearn(loader: str):
    def build(seed, data_dir):
        import sklearn.datasets

        X, y = getattr(sklearn.datasets, loader)(return_X_y=True)
        return np.asarray(X, dtype=np.float64), np.asarray(y)

    return build


def _shared(name: str):
    def build(seed, data_dir):
        from skbandit.experiments._data import load_dataset

        return load_dataset(name, data_dir=data_dir, download=False)

    return build


def _classification(
    n, d, k, *, informative, weights=None, flip_y=0.0, sep=1.0, log_scale=0.0
):
    """scikit-learn's ``make_classification``; ``log_scale > 0`` multiplies each
    column by ``10**u``, ``u`` uniform on ``[-log_scale, log_scale]``."""

    def build(seed, data_dir):
        from sklearn.datasets import make_classification

        X, y = make_classification(
            n_samples=n,
            n_features=d,
            n_informative=informative,
            n_redundant=0,
            n_classes=k,
            n_clusters_per_class=1,
            weights=weights,
            flip_y=flip_y,
            class_sep=sep,
            random_state=seed,
        )
        if log_scale:
            rng = np.random.default_rng(seed + 7)
            X = X * 10.0 ** rng.uniform(-log_scale, log_scale, d)
        return X, y

    return build


def _synsep(n, *, k=9, n_features=400, n_rare=120, noise=0.0):
    def build(seed, data_dir):
        from skbandit.datasets import make_synnonsep

        return make_synnonsep(
            n,
            n_classes=k,
            n_features=n_features,
            n_rare=n_rare,
            noise=noise,
            sparse=True,
            random_state=seed,
        )

    return build


def drifting_synnonsep_chunks(
    n_rounds: int, drift_every: int, *, random_state: int = 0, **kwargs
) -> Iterator[tuple[sp.csr_matrix, np.ndarray]]:
    """SynNonSep whose class prototypes are redrawn every ``drift_every`` rounds.

    Segment ``j`` (rounds ``j * drift_every + 1, ...``) is ``make_synnonsep``
    drawn with ``random_state=numpy.random.default_rng([random_state, j])``: new
    prototypes (an abrupt change of concept), the same generative process. Yields
    one ``(X, y)`` segment at a time (CSR), so that a stream of 5 million rounds
    is never held in memory at once (a segment of 10**6 rows takes about 0.55 GB).
    ``kwargs`` go to ``make_synnonsep`` (``n_classes``, ``noise``, ...).
    """
    from skbandit.datasets import make_synnonsep

    for j, start in enumerate(range(0, n_rounds, drift_every)):
        m = min(drift_every, n_rounds - start)
        rng = np.random.default_rng([random_state, j])
        yield make_synnonsep(m, sparse=True, random_state=rng, **kwargs)


def _drifting(n, drift_every, **kwargs):
    def build(seed, data_dir):
        parts = list(
            drifting_synnonsep_chunks(n, drift_every, random_state=seed, **kwargs)
        )
        return sp.vstack([p[0] for p in parts], format="csr"), np.concatenate(
            [p[1] for p in parts]
        )

    return build


def _topics(n, *, k, vocabulary, words, concentration, seed_offset=0):
    """Short documents from ``k`` topics: a topic is a Dirichlet distribution over
    the vocabulary; a document draws ``words`` words from its class's topic and
    is stored as binary bag-of-words, rows scaled to unit L2 norm (tf-idf-like)."""

    def build(seed, data_dir):
        rng = np.random.default_rng(seed + seed_offset)
        topics = rng.dirichlet(np.full(vocabulary, concentration), size=k)
        y = rng.integers(k, size=n)
        rows, cols = [], []
        for i, c in enumerate(y):
            w = np.unique(rng.choice(vocabulary, size=words, p=topics[c]))
            rows.append(np.full(w.size, i))
            cols.append(w)
        rows, cols = np.concatenate(rows), np.concatenate(cols)
        X = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, vocabulary))
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        X = sp.diags(1.0 / np.maximum(norms, 1e-12)) @ X
        return X.tocsr(), y

    return build


def _tfidf_counts(rows, cols, n, vocabulary, *, sublinear_tf=False):
    """Documents as word counts (one ``(row, column)`` pair per word drawn, the
    per-document arrays in ``rows``/``cols``) weighted by scikit-learn's
    ``TfidfTransformer`` (smooth idf, unit L2 rows)."""
    from sklearn.feature_extraction.text import TfidfTransformer

    rows, cols = np.concatenate(rows), np.concatenate(cols)
    counts = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, vocabulary))
    counts.sum_duplicates()
    transformer = TfidfTransformer(sublinear_tf=sublinear_tf)
    return transformer.fit_transform(counts).tocsr()


def _tfidf_topics(n, *, k, vocabulary, mean_words, background, concentration):
    """Documents of varying length as tf-idf rows: a shared Zipfian background
    vocabulary (share ``background`` of a document's words) and ``k`` class topics
    (Dirichlet over the vocabulary); lengths ``1 + Poisson(mean_words - 1)``;
    counts weighted by scikit-learn's ``TfidfTransformer`` (smooth idf, unit L2
    rows), as for a tf-idf corpus."""

    def build(seed, data_dir):
        rng = np.random.default_rng(seed)
        topics = rng.dirichlet(np.full(vocabulary, concentration), size=k)
        ranks = rng.permutation(vocabulary) + 1.0
        back = (1.0 / ranks) / np.sum(1.0 / ranks)
        y = rng.integers(k, size=n)
        rows, cols = [], []
        for i, c in enumerate(y):
            m = 1 + rng.poisson(mean_words - 1)
            nb = rng.binomial(m, background)
            w = np.concatenate(
                [
                    rng.choice(vocabulary, size=nb, p=back),
                    rng.choice(vocabulary, size=m - nb, p=topics[c]),
                ]
            )
            rows.append(np.full(w.size, i))
            cols.append(w)
        return _tfidf_counts(rows, cols, n, vocabulary), y

    return build


def _raw_table(n, d, k, *, informative, sep, flip_y=0.0, log_scale=2.0):
    """A small table of raw measurements: ``make_classification`` whose column
    ``i`` is shifted to a positive offset and scaled, ``(x_i + o_i) 10^{u_i}``
    with ``o_i`` uniform on [2, 6] and ``u_i`` uniform on
    ``[-log_scale, log_scale]`` (non-centred columns of very different scales,
    like physical or chemical measurements)."""

    classification = _classification(
        n, d, k, informative=informative, flip_y=flip_y, sep=sep
    )

    def build(seed, data_dir):
        X, y = classification(seed, data_dir)
        rng = np.random.default_rng(seed + 11)
        X = (X + rng.uniform(2.0, 6.0, d)) * 10.0 ** rng.uniform(
            -log_scale, log_scale, d
        )
        return X, y

    return build


def _blobs(n, d, k, *, std, spread, offset=0.0, log_scale=0.0, weights=None):
    """Gaussian clusters (one per class) around centres drawn uniformly on
    ``[-spread, spread]^d``, per-class standard deviations ``std * U(0.5, 1.5)``;
    optionally class weights, a positive offset ``offset * U(1, 2)`` and column
    scales ``10^U(-log_scale, log_scale)`` (small low-dimensional tables such as
    measurements of a few species or parts)."""

    def build(seed, data_dir):
        rng = np.random.default_rng(seed)
        centres = rng.uniform(-spread, spread, (k, d))
        sd = std * rng.uniform(0.5, 1.5, k)
        p = None if weights is None else np.asarray(weights) / np.sum(weights)
        y = rng.choice(k, size=n, p=p)
        X = centres[y] + sd[y, None] * rng.standard_normal((n, d))
        if offset:
            X = X + offset * rng.uniform(1.0, 2.0, d)
        if log_scale:
            X = X * 10.0 ** rng.uniform(-log_scale, log_scale, d)
        return X, y

    return build


def _keyword_docs(n, *, k, vocabulary, keywords, mean_words, keyword_share):
    """Documents as sublinear tf-idf rows (``1 + log tf``, smooth idf, unit L2):
    each class owns ``keywords`` keywords (some shared between classes) drawn
    uniformly; a document of ``1 + Poisson(mean_words - 1)`` words takes each
    word from its class's keywords with probability ``keyword_share``, else from
    a Zipfian background over the whole vocabulary."""

    def build(seed, data_dir):
        rng = np.random.default_rng(seed)
        kw = [rng.choice(vocabulary, size=keywords, replace=False) for _ in range(k)]
        back = 1.0 / (rng.permutation(vocabulary) + 1.0) ** 1.1
        back = back / back.sum()
        y = rng.integers(k, size=n)
        rows, cols = [], []
        for i, c in enumerate(y):
            m = 1 + rng.poisson(mean_words - 1)
            nk = rng.binomial(m, keyword_share)
            w = np.concatenate(
                [
                    kw[c][rng.integers(keywords, size=nk)],
                    rng.choice(vocabulary, m - nk, p=back),
                ]
            )
            rows.append(np.full(w.size, i))
            cols.append(w)
        return _tfidf_counts(rows, cols, n, vocabulary, sublinear_tf=True), y

    return build


def _glyphs(n, *, k, side, strokes, noise):
    """Digit-like images: ``k`` glyphs on a ``side x side`` grid, each the union
    of ``strokes`` random line segments, blurred; a sample is its class's glyph
    shifted by up to one pixel, with Gaussian intensity noise, clipped and
    quantised to the integers 0..16 (as scikit-learn's digits)."""

    def build(seed, data_dir):
        rng = np.random.default_rng(seed)
        glyphs = np.zeros((k, side + 2, side + 2))
        for c in range(k):
            for _ in range(strokes):
                a, b = rng.uniform(1, side + 1, 2), rng.uniform(1, side + 1, 2)
                for u in np.linspace(0.0, 1.0, 4 * side):
                    r, q = (a + u * (b - a)).astype(int)
                    glyphs[c, r, q] = 1.0
            g = glyphs[c]
            glyphs[c] = (
                g
                + 0.5 * (np.roll(g, 1, 0) + np.roll(g, -1, 0))
                + 0.5 * (np.roll(g, 1, 1) + np.roll(g, -1, 1))
            )
            glyphs[c] = glyphs[c] / glyphs[c].max()
        y = rng.integers(k, size=n)
        dr, dc = rng.integers(-1, 2, n), rng.integers(-1, 2, n)
        X = np.empty((n, side * side))
        for i in range(n):
            img = np.roll(np.roll(glyphs[y[i]], dr[i], 0), dc[i], 1)[1:-1, 1:-1]
            img = 16.0 * img + noise * rng.standard_normal(img.shape)
            X[i] = np.clip(np.rint(img), 0.0, 16.0).ravel()
        return X, y

    return build


# ------------------------------------------------- nonlinear generator families
def _clusters(n, d, k, *, informative, clusters, sep, flip_y=0.0):
    """``make_classification`` with ``clusters`` Gaussian clusters per class at
    vertices of a hypercube in ``informative`` dimensions (the rest noise): a
    class is a union of clusters, so no linear separator isolates it."""

    def build(seed, data_dir):
        from sklearn.datasets import make_classification

        return make_classification(
            n_samples=n,
            n_features=d,
            n_informative=informative,
            n_redundant=0,
            n_classes=k,
            n_clusters_per_class=clusters,
            flip_y=flip_y,
            class_sep=sep,
            random_state=seed,
        )

    return build


def _quantiles(n, d, k, *, noise_dims=0, shift=0.0):
    """``make_gaussian_quantiles``: classes are nested shells of a Gaussian
    (labels by the quantiles of the squared norm), plus ``noise_dims`` standard
    normal columns and an offset ``shift`` (radial classes: linear scores only
    reach the direction of the offset)."""

    def build(seed, data_dir):
        from sklearn.datasets import make_gaussian_quantiles

        X, y = make_gaussian_quantiles(
            n_samples=n, n_features=d, n_classes=k, random_state=seed
        )
        rng = np.random.default_rng(seed + 3)
        if noise_dims:
            X = np.hstack([X, rng.standard_normal((n, noise_dims))])
        return X + shift, y

    return build


def _checkerboard(n, d, k, *, axes, cells, noise=0.0):
    """A checkerboard in ``axes`` of ``d`` uniform columns on [-1, 1]: the label
    is ``sum_j floor(cells (x_j + 1) / 2) mod k`` over the first ``axes`` columns
    (``cells = 2, k = 2``: the XOR/parity of ``axes`` signs), a share ``noise``
    of labels redrawn; the columns are then rotated by a random orthogonal
    matrix, so the structure is not aligned with the coordinates."""

    def build(seed, data_dir):
        rng = np.random.default_rng(seed)
        Z = rng.uniform(-1.0, 1.0, (n, d))
        cell = np.minimum(np.floor(cells * (Z[:, :axes] + 1.0) / 2.0), cells - 1)
        y = cell.sum(axis=1).astype(np.int64) % k
        flip = rng.random(n) < noise
        y[flip] = rng.integers(k, size=int(flip.sum()))
        Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
        return Z @ Q, y

    return build


def _kernel_concept(n, d, k, *, centres, width, noise=0.0, drift_every=0):
    """A kernel-based concept: class ``c`` scores ``f_c(x) = sum_j a_cj
    exp(-||x - z_j||^2 / (2 width^2 d))`` over ``centres`` random centres
    ``z_j ~ N(0, I)`` with weights ``a_cj ~ N(0, 1)``, each standardised over
    the rows (so that the classes are of like sizes); the label is ``argmax_c
    f_c(x)`` for ``x ~ N(0, I)``, a share ``noise`` of labels redrawn. With
    ``drift_every``, the centres and weights are redrawn every ``drift_every``
    rounds (an abrupt change of concept)."""

    def build(seed, data_dir):
        rng = np.random.default_rng(seed)
        X = rng.standard_normal((n, d))
        y = np.empty(n, dtype=np.int64)
        step = drift_every or n
        for lo in range(0, n, step):
            Z = rng.standard_normal((centres, d))
            A = rng.standard_normal((centres, k))
            Xb = X[lo : lo + step]
            sq = (Xb**2).sum(1)[:, None] - 2.0 * Xb @ Z.T + (Z**2).sum(1)[None, :]
            F = np.exp(-sq / (2.0 * width**2 * d)) @ A
            F = (F - F.mean(axis=0)) / F.std(axis=0)  # classes of like sizes
            y[lo : lo + step] = np.argmax(F, axis=1)
        flip = rng.random(n) < noise
        y[flip] = rng.integers(k, size=int(flip.sum()))
        return X, y

    return build


def _moving_clusters(n, d, k, *, clusters, std, drift_every):
    """``clusters`` Gaussian clusters per class with centres uniform on
    ``[-1, 1]^d`` (standard deviation ``std``), redrawn every ``drift_every``
    rounds: a nonlinear concept that changes abruptly."""

    def build(seed, data_dir):
        rng = np.random.default_rng(seed)
        X = np.empty((n, d))
        y = rng.integers(k, size=n)
        for lo in range(0, n, drift_every):
            C = rng.uniform(-1.0, 1.0, (k, clusters, d))
            m = min(drift_every, n - lo)
            which = rng.integers(clusters, size=m)
            X[lo : lo + m] = C[y[lo : lo + m], which] + std * rng.standard_normal(
                (m, d)
            )
        return X, y

    return build


def _zipf(k, a=1.0):
    w = 1.0 / np.arange(1, k + 1) ** a
    return list(w / w.sum())


# ------------------------------------------------------------------ the lists
TUNING: tuple[Stream, ...] = (
    Stream(
        "digits",
        "tuning",
        "scikit-learn load_digits (1,797 x 64, k=10, pixels 0..16)",
        _sklearn("load_digits"),
        True,
    ),
    Stream(
        "breast_cancer",
        "tuning",
        "scikit-learn load_breast_cancer (569 x 30, k=2, raw feature scales)",
        _sklearn("load_breast_cancer"),
        True,
    ),
    Stream(
        "usps",
        "tuning",
        "shared USPS (9,298 x 256, k=10), other orders",
        _shared("usps"),
        True,
    ),
    Stream(
        "covtype",
        "tuning",
        "shared covtype_small (10,000 x 54, k=7, min-max), other orders",
        _shared("covtype"),
        True,
    ),
    Stream(
        "synsep-k20",
        "tuning",
        "SynSep generator, k=20, d=600, 200 rare (20,000 rows, separable)",
        _synsep(20_000, k=20, n_features=600, n_rare=200),
        False,
    ),
    Stream(
        "imbalanced-k5",
        "tuning",
        "make_classification k=5, d=20, class weights .5/.25/.12/.08/.05, 2% flips "
        "(10,000 rows)",
        _classification(
            10_000,
            20,
            5,
            informative=10,
            weights=[0.5, 0.25, 0.12, 0.08, 0.05],
            flip_y=0.02,
            sep=1.5,
        ),
        False,
    ),
    Stream(
        "noisy-k8",
        "tuning",
        "make_classification k=8, d=40, 20% labels redrawn (10,000 rows)",
        _classification(10_000, 40, 8, informative=20, flip_y=0.2, sep=2.0),
        False,
    ),
    Stream(
        "drift-k9",
        "tuning",
        "SynNonSep (noise 0.05), prototypes redrawn every 10,000 rounds (30,000 rows)",
        _drifting(30_000, 10_000),
        False,
    ),
    Stream(
        "tfidf-k20",
        "tuning",
        "generated tf-idf documents, 20 topics plus a Zipfian background (half "
        "the words), vocabulary 8,000, 60 words on average (2,000 docs)",
        _tfidf_topics(
            2_000,
            k=20,
            vocabulary=8_000,
            mean_words=60,
            background=0.5,
            concentration=0.02,
        ),
        False,
    ),
    Stream(
        "tfidf-k8",
        "tuning",
        "generated tf-idf documents, 8 topics plus a Zipfian background (70% of "
        "the words), vocabulary 4,000, 30 words on average (5,000 docs)",
        _tfidf_topics(
            5_000,
            k=8,
            vocabulary=4_000,
            mean_words=30,
            background=0.7,
            concentration=0.05,
        ),
        False,
    ),
    Stream(
        "raw-k3",
        "tuning",
        "make_classification k=3, d=12, columns (x + U(2,6)) 10^U(-2,2), (200 rows)",
        _raw_table(200, 12, 3, informative=6, sep=1.5),
        False,
    ),
    Stream(
        "raw-k4",
        "tuning",
        "make_classification k=4, d=20, columns (x + U(2,6)) 10^U(-2,2), 3% "
        "flips (400 rows)",
        _raw_table(400, 20, 4, informative=8, sep=1.5, flip_y=0.03),
        False,
    ),
    Stream(
        "raw-k2",
        "tuning",
        "make_classification k=2, d=8, columns (x + U(2,6)) 10^U(-1,1) (300 rows)",
        _raw_table(300, 8, 2, informative=4, sep=1.0, log_scale=1.0),
        False,
    ),
    Stream(
        "clusters-k5",
        "tuning",
        "make_classification k=5, d=10, 6 informative, 3 clusters per class, "
        "2% flips (15,000 rows; nonlinear)",
        _clusters(15_000, 10, 5, informative=6, clusters=3, sep=1.5, flip_y=0.02),
        False,
    ),
    Stream(
        "quantiles-k4",
        "tuning",
        "make_gaussian_quantiles k=4, d=6, plus 2 noise columns, offset 1 "
        "(10,000 rows; nested shells)",
        _quantiles(10_000, 6, 4, noise_dims=2, shift=1.0),
        False,
    ),
    Stream(
        "xor-k2-d6",
        "tuning",
        "parity of the signs of 3 of 6 uniform columns, rotated, 2% flips "
        "(10,000 rows; XOR)",
        _checkerboard(10_000, 6, 2, axes=3, cells=2, noise=0.02),
        False,
    ),
    Stream(
        "kernel-k6-d16",
        "tuning",
        "kernel concept: argmax of 6 random sums of 20 Gaussian bumps in d=16 "
        "(15,000 rows)",
        _kernel_concept(15_000, 16, 6, centres=20, width=0.5),
        False,
    ),
    Stream(
        "moving-clusters-k4",
        "tuning",
        "4 classes of 3 Gaussian clusters in d=8 (sd 0.25), centres redrawn every "
        "10,000 rounds (20,000 rows; nonlinear drift)",
        _moving_clusters(20_000, 8, 4, clusters=3, std=0.25, drift_every=10_000),
        False,
    ),
)

VALIDATION: tuple[Stream, ...] = (
    Stream(
        "mnist",
        "validation",
        "shared MNIST t10k (10,000 x 784, k=10), other orders",
        _shared("mnist"),
        True,
    ),
    Stream(
        "20newsgroups-tfidf",
        "validation",
        "shared mini 20 Newsgroups tf-idf (2,000 docs, k=20), other orders",
        _shared("20newsgroups-tfidf"),
        True,
    ),
    Stream(
        "wine",
        "validation",
        "scikit-learn load_wine (178 x 13, k=3, raw scales)",
        _sklearn("load_wine"),
        True,
    ),
    Stream(
        "iris",
        "validation",
        "scikit-learn load_iris (150 x 4, k=3)",
        _sklearn("load_iris"),
        True,
    ),
    Stream(
        "scaled-k6",
        "validation",
        "make_classification k=6, d=30, columns scaled by 10^U(-3,3), 5% flips "
        "(10,000 rows)",
        _classification(
            10_000, 30, 6, informative=15, flip_y=0.05, sep=1.5, log_scale=3.0
        ),
        False,
    ),
    Stream(
        "zipf-k15",
        "validation",
        "make_classification k=15, d=50, Zipf class weights, 5% flips (15,000 rows)",
        _classification(
            15_000, 50, 15, informative=30, weights=_zipf(15), flip_y=0.05, sep=2.0
        ),
        False,
    ),
    Stream(
        "topics-k12",
        "validation",
        "short binary bag-of-words documents from 12 Dirichlet topics, vocabulary "
        "3,000, 25 words, unit rows (8,000 docs)",
        _topics(8_000, k=12, vocabulary=3_000, words=25, concentration=0.05),
        False,
    ),
    Stream(
        "drift-k6",
        "validation",
        "SynNonSep k=6, noise 0.1, prototypes redrawn every 20,000 rounds "
        "(40,000 rows)",
        _drifting(40_000, 20_000, n_classes=6, noise=0.1),
        False,
    ),
    Stream(
        "clusters-k8",
        "validation",
        "make_classification k=8, d=20, 10 informative, 4 clusters per class "
        "(20,000 rows; nonlinear)",
        _clusters(20_000, 20, 8, informative=10, clusters=4, sep=2.0),
        False,
    ),
    Stream(
        "quantiles-k3-d12",
        "validation",
        "make_gaussian_quantiles k=3, d=12 (12,000 rows; nested shells)",
        _quantiles(12_000, 12, 3),
        False,
    ),
    Stream(
        "checker-k3-d8",
        "validation",
        "3-colour checkerboard of 3 cells on 2 of 8 uniform columns, rotated, "
        "3% flips (15,000 rows)",
        _checkerboard(15_000, 8, 3, axes=2, cells=3, noise=0.03),
        False,
    ),
    Stream(
        "kernel-k10-d32",
        "validation",
        "kernel concept: argmax of 10 random sums of 40 Gaussian bumps in d=32, "
        "5% flips (20,000 rows)",
        _kernel_concept(20_000, 32, 10, centres=40, width=0.6, noise=0.05),
        False,
    ),
    Stream(
        "drift-kernel-k5",
        "validation",
        "kernel concept (5 classes, 15 bumps, d=10) redrawn every 10,000 rounds "
        "(20,000 rows; nonlinear drift)",
        _kernel_concept(20_000, 10, 5, centres=15, width=0.5, drift_every=10_000),
        False,
    ),
)

VW_CBIFY: tuple[Stream, ...] = tuple(
    Stream(
        name,
        "vw-cbify",
        f"vw-cbify experiment stream {name!r} (order seed 0)",
        _shared(name),
        False,
    )
    for name in ("usps", "mnist", "covtype", "20newsgroups-tfidf")
) + (
    Stream(
        "synsep",
        "vw-cbify",
        "vw-cbify SynSep, 100,000 rows, random_state=0",
        _synsep(100_000),
        False,
    ),
    Stream(
        "synnonsep",
        "vw-cbify",
        "vw-cbify SynNonSep, 100,000 rows, random_state=0",
        _synsep(100_000, noise=0.05),
        False,
    ),
)

# PROBE: fresh streams built after the validation report of the shared-scale
# defaults had been run once, to probe how the change generalises beyond the
# streams seen so far; never used to choose anything (report-only, like
# VALIDATION; see docs/algorithms.md, SquareCB).
PROBE: tuple[Stream, ...] = (
    Stream(
        "raw-k5",
        "probe",
        "make_classification k=5, d=30, columns (x + U(2,6)) 10^U(-3,3), 5% flips "
        "(1,000 rows)",
        _raw_table(1000, 30, 5, informative=10, sep=1.2, flip_y=0.05, log_scale=3.0),
        False,
    ),
    Stream(
        "raw-k3-small",
        "probe",
        "make_classification k=3, d=6, columns (x + U(2,6)) 10^U(-1.5,1.5) (150 rows)",
        _raw_table(150, 6, 3, informative=4, sep=2.0, log_scale=1.5),
        False,
    ),
    Stream(
        "tfidf-k15",
        "probe",
        "generated tf-idf documents, 15 topics plus a Zipfian background (60% of "
        "the words), vocabulary 6,000, 40 words on average (3,000 docs)",
        _tfidf_topics(
            3_000,
            k=15,
            vocabulary=6_000,
            mean_words=40,
            background=0.6,
            concentration=0.03,
        ),
        False,
    ),
    Stream(
        "centred-k10",
        "probe",
        "make_classification k=10, d=40, 5% flips (5,000 rows)",
        _classification(5_000, 40, 10, informative=20, flip_y=0.05, sep=1.5),
        False,
    ),
    Stream(
        "topics-k6",
        "probe",
        "short binary bag-of-words documents from 6 Dirichlet topics, vocabulary "
        "2,000, 15 words, unit rows (4,000 docs)",
        _topics(4_000, k=6, vocabulary=2_000, words=15, concentration=0.1),
        False,
    ),
    Stream(
        "lowdim-k4",
        "probe",
        "make_classification k=4, d=5, 4 informative (300 rows)",
        _classification(300, 5, 4, informative=4, sep=2.0),
        False,
    ),
)

# PROBE2: fresh streams from generator families no other suite uses, committed
# before any tuning of the step-size mechanism for small low-dimensional tables
# report-only, never used to choose anything.
PROBE2: tuple[Stream, ...] = (
    Stream(
        "blobs-k3-d4",
        "probe2",
        "3 Gaussian clusters in d=4, offset columns (150 rows)",
        _blobs(150, 4, 3, std=0.6, spread=1.5, offset=3.0),
        False,
    ),
    Stream(
        "blobs-k5-d3",
        "probe2",
        "5 Gaussian clusters in d=3, offset columns scaled by 10^U(-1,1) (500 rows)",
        _blobs(500, 3, 5, std=0.7, spread=2.0, offset=4.0, log_scale=1.0),
        False,
    ),
    Stream(
        "blobs-k2-d2",
        "probe2",
        "2 overlapping Gaussian clusters in d=2 (250 rows)",
        _blobs(250, 2, 2, std=1.0, spread=1.5),
        False,
    ),
    Stream(
        "blobs-k6-d7-imb",
        "probe2",
        "6 Gaussian clusters in d=7, class weights 8:4:2:2:1:1, offset columns "
        "scaled by 10^U(-2,2) (800 rows)",
        _blobs(
            800,
            7,
            6,
            std=1.0,
            spread=2.5,
            offset=5.0,
            log_scale=2.0,
            weights=[8, 4, 2, 2, 1, 1],
        ),
        False,
    ),
    Stream(
        "blobs-k4-d12-raw",
        "probe2",
        "4 Gaussian clusters in d=12, offset columns scaled by 10^U(-3,3) (2,000 rows)",
        _blobs(2_000, 12, 4, std=1.5, spread=2.0, offset=3.0, log_scale=3.0),
        False,
    ),
    Stream(
        "keywords-k10",
        "probe2",
        "sublinear tf-idf documents, 10 classes of 40 keywords, 35% keyword "
        "words, vocabulary 5,000, 20 words on average (3,000 docs)",
        _keyword_docs(
            3_000,
            k=10,
            vocabulary=5_000,
            keywords=40,
            mean_words=20,
            keyword_share=0.35,
        ),
        False,
    ),
    Stream(
        "glyphs-k10",
        "probe2",
        "digit-like 10x10 images (0..16) of 10 random-stroke glyphs, shifted "
        "by up to a pixel, noisy (3,000 rows)",
        _glyphs(3_000, k=10, side=10, strokes=3, noise=3.0),
        False,
    ),
)

# PROBE3: fresh dense streams with many classes (the held-out streams the
# issue describes include a 26-class letter table), from settings no other
# suite uses; committed before any run, report-only, never used to choose.
PROBE3: tuple[Stream, ...] = (
    Stream(
        "clusters-k26-d16",
        "probe3",
        "make_classification k=26, d=16, 12 informative, 2 clusters per class "
        "(15,000 rows; nonlinear, many classes)",
        _clusters(15_000, 16, 26, informative=12, clusters=2, sep=2.0),
        False,
    ),
    Stream(
        "glyphs-k26",
        "probe3",
        "letter-like 8x8 images (0..16) of 26 random-stroke glyphs, shifted by "
        "up to a pixel, noisy (10,000 rows)",
        _glyphs(10_000, k=26, side=8, strokes=3, noise=3.0),
        False,
    ),
    Stream(
        "kernel-k20-d12",
        "probe3",
        "kernel concept, k=20, d=12, 30 centres, width 0.5, 3% noise (15,000 rows)",
        _kernel_concept(15_000, 12, 20, centres=30, width=0.5, noise=0.03),
        False,
    ),
    Stream(
        "quantiles-k8-d6",
        "probe3",
        "make_gaussian_quantiles k=8, d=6 (15,000 rows; nested shells)",
        _quantiles(15_000, 6, 8),
        False,
    ),
    Stream(
        "checker-k5-d6",
        "probe3",
        "checkerboard k=5 on 2 of 6 rotated axes, 5 cells, 2% noise (15,000 rows)",
        _checkerboard(15_000, 6, 5, axes=2, cells=5, noise=0.02),
        False,
    ),
)


SUITES = {
    "tuning": TUNING,
    "validation": VALIDATION,
    "vw-cbify": VW_CBIFY,
    "probe": PROBE,
    "probe2": PROBE2,
    "probe3": PROBE3,
}


def get_stream(name: str, suite: str) -> Stream:
    for s in SUITES[suite]:
        if s.name == name:
            return s
    raise KeyError(f"no stream {name!r} in the {suite} suite")


def load_stream(
    name: str, seed: int, *, suite: str | None = None, data_dir: str | None = None
):
    """``(X, y)`` of stream ``name`` for seed ``seed`` (see the module docstring).

    ``suite`` defaults to the first suite that has ``name`` (tuning, validation,
    vw-cbify)."""
    data_dir = DATA_DIR if data_dir is None else data_dir
    if suite is None:
        suite = next(k for k, v in SUITES.items() if any(s.name == name for s in v))
    stream = get_stream(name, suite)
    if suite == "vw-cbify":
        return stream.build(0, data_dir)  # the experiment's stream for every seed
    base = ORDER_BASE[suite] + seed
    X, y = stream.build(base, data_dir)
    if stream.real:
        order = np.random.default_rng(base).permutation(len(y))
        X, y = X[order], y[order]
    if sp.issparse(X):
        X = sp.csr_matrix(X)
    return X, np.asarray(y)


# ------------------------------------------------------------------ VW's best
VW_ARGS = (
    "--cbify {k} --epsilon 0.05",
    "--cbify {k} --epsilon 0.01",
    "--cbify {k} --epsilon 0.002",
    "--cbify {k} --cb_explore_adf --squarecb",
    "--cbify {k} --bag 5",
)


def vw_errors(X, y, seed: int) -> dict[str, float]:
    """Online error of each of the five vw-cbify configurations (one pass)."""
    from skbandit.experiments._learners import VWLearner

    classes = np.unique(y)
    n = len(y)
    return {
        args: VWLearner(args, seed).run(X, y, classes, [n])["mistakes"][-1] / n
        for args in VW_ARGS
    }


def vw_best(name: str, suite: str, seed: int, X, y, cache: str | None = None) -> float:
    """VW's best online error of the five configurations on this stream and seed,
    read from / written to the JSON ``cache`` (key ``suite/name/seed``)."""
    key = f"{suite}/{name}/{seed}"
    store = {}
    if cache and os.path.exists(cache):
        with open(cache) as f:
            store = json.load(f)
    if key not in store:
        store[key] = vw_errors(X, y, seed)
        if cache:
            with open(cache, "w") as f:
                json.dump(store, f, indent=1, sort_keys=True)
    return min(store[key].values())


# --------------------------------------------------- VW tuned in hindsight
_EXPLORE = {
    "eps05": "--epsilon 0.05",
    "eps01": "--epsilon 0.01",
    "squarecb": "--cb_explore_adf --squarecb",
    "regcbopt": "--cb_explore_adf --regcb --regcbopt",
    "softmax": "--cb_explore_adf --softmax --lambda 10",
    "bag5": "--bag 5",
    "cover4": "--cover 4",
}


def _grid() -> tuple[str, ...]:
    e = _EXPLORE
    grid = [e[x] for x in e]  # 7 rules at VW's default step (0.5)
    for x in ("eps05", "squarecb", "bag5"):  # learning rates 0.1, 2 and 8
        grid += [f"{e[x]} -l {lr}" for lr in (0.1, 2, 8)]
    grid += [f"{e[x]} -q ::" for x in ("eps05", "squarecb", "regcbopt", "bag5")]
    grid += [f"{e[x]} -q :: -l 2" for x in ("eps05", "squarecb")]
    grid += [f"{e[x]} --cubic :::" for x in ("eps05", "squarecb", "bag5")]
    grid += [f"{e['squarecb']} --cubic ::: -l 2"]
    grid += [f"{e[x]} --nn 40" for x in ("eps05", "squarecb", "regcbopt", "bag5")]
    grid += [f"{e['squarecb']} --nn 40 -l {lr}" for lr in (0.1, 2)]
    grid += [f"{e['squarecb']} --nn 40 -q ::"]
    return tuple("--cbify {k} " + g for g in grid)


#: The 33 ``--cbify`` configurations of "VW tuned in hindsight": 7 exploration
#: rules (epsilon-greedy 0.05 and 0.01, SquareCB, RegCB-opt, softmax, bagging,
#: cover) at the default step, learning rates 0.1/2/8 for three of them,
#: quadratic (``-q ::``) and cubic (``--cubic :::``) interactions, and the
#: one-hidden-layer network reduction (``--nn 40``).
VW_GRID: tuple[str, ...] = _grid()

#: Interactions are tried where a row is small enough for them to run in
#: reasonable time: quadratic where the mean number of non-zeros per row is at
#: most 100, cubic where it is at most 24 (a rule fixed before any run).
MAX_NNZ_QUADRATIC, MAX_NNZ_CUBIC = 100, 24


def vw_grid_for(X) -> tuple[str, ...]:
    """The configurations of ``VW_GRID`` played on ``X`` (interactions only
    where its rows are small enough, ``MAX_NNZ_QUADRATIC``/``MAX_NNZ_CUBIC``)."""
    nnz = (X.nnz if sp.issparse(X) else np.count_nonzero(X)) / X.shape[0]
    return tuple(
        a
        for a in VW_GRID
        if ("-q" not in a or nnz <= MAX_NNZ_QUADRATIC)
        and ("--cubic" not in a or nnz <= MAX_NNZ_CUBIC)
    )


def vw_tuned(
    name: str, suite: str, seed: int, X, y, cache: str | None = None
) -> tuple[float, str]:
    """VW's smallest online error over ``vw_grid_for(X)`` on this stream and seed
    and the configuration that reached it, read from / written to the JSON
    ``cache`` (key ``suite/name/seed``, one error per configuration)."""
    from skbandit.experiments._learners import VWLearner

    key = f"{suite}/{name}/{seed}"
    store = {}
    if cache and os.path.exists(cache):
        with open(cache) as f:
            store = json.load(f)
    row = store.setdefault(key, {})
    classes, n = np.unique(y), len(y)
    todo = [a for a in vw_grid_for(X) if a not in row]
    for args in todo:
        row[args] = _isolated(
            lambda a=args: (
                VWLearner(a, seed).run(X, y, classes, [n])["mistakes"][-1] / n
            )
        )
        if cache:
            with open(cache, "w") as f:
                json.dump(store, f, indent=1, sort_keys=True)
    ran = {a: e for a, e in row.items() if e is not None}
    best = min(ran, key=ran.get)
    return ran[best], best


def _isolated(fn: Callable[[], float]) -> float | None:
    """``fn()`` in a forked child process; ``None`` when the child dies (some
    VW configurations corrupt the heap on some streams: the run is left out
    and recorded as ``null``, without taking the parent down)."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)

    def child():
        send.send(fn())

    proc = ctx.Process(target=child)
    proc.start()
    send.close()
    try:
        value = recv.recv()
    except EOFError:
        value = None
    proc.join()
    return value if proc.exitcode == 0 else None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data-dir", default=DATA_DIR)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    for suite, streams in SUITES.items():
        print(f"== {suite}")
        for s in streams:
            X, y = load_stream(s.name, a.seed, suite=suite, data_dir=a.data_dir)
            kind = "csr" if sp.issparse(X) else "dense"
            print(
                f"{s.name:>20}  n={X.shape[0]:>6} d={X.shape[1]:>6} "
                f"k={len(np.unique(y)):>3} {kind:>5}  {s.source}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
