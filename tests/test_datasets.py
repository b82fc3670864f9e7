"""skbandit.datasets: the papers' generators and the offline loaders.

The expectations come from the papers' descriptions of the data (Kakade et al.,
2008; Beygelzimer et al., 2017 and 2019) and from the public data sets
themselves, never from the generators' current output. No test touches the
network: the loaders are given local files, and the scikit-learn fetchers and
the socket layer are replaced by guards or tiny fakes.
"""

from __future__ import annotations

import bz2
import hashlib
import socket
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.datasets
from conftest import shared_data_file
from sklearn.utils import Bunch

import skbandit.datasets._base as datasets_base
import skbandit.datasets._digits as digit_loaders
import skbandit.datasets._text as text_loaders
from skbandit import MulticlassPerceptron
from skbandit.datasets import (
    fetch_20newsgroups,
    fetch_covtype,
    fetch_mnist,
    fetch_rcv1_reuters4,
    fetch_usps,
    get_data_home,
    make_separable_stream,
    make_synnonsep,
    make_synsep,
)

N_RARE, N_FEATURES, N_CLASSES = 120, 400, 9


# ---------------------------------------------------------------------------
# SynSep / SynNonSep
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def synsep():
    """10^5 SynSep rows (CSR) and labels, with the class prototypes recovered.

    Every active bit of a prototype survives in some example of its class
    (each example drops only 5 of ~30), so the union of the rare parts of a
    class's rows is its prototype.
    """
    X, y = make_synsep(100_000, sparse=True, random_state=0)
    rare = X[:, :N_RARE].toarray().astype(bool)
    prototypes = np.array([rare[y == c].any(axis=0) for c in range(N_CLASSES)])
    return X, y, rare, prototypes


def test_synsep_rows_follow_the_construction(synsep):
    X, y, rare, prototypes = synsep
    assert X.shape == (100_000, N_FEATURES) and y.shape == (100_000,)
    assert sp.isspmatrix_csr(X) and X.dtype == np.float64 and y.dtype == np.int64
    assert np.array_equal(np.unique(X.data), [1.0])
    assert X.has_canonical_format
    sizes = prototypes.sum(axis=1)
    assert (sizes > 5).all()
    # Each row: its class prototype minus exactly 5 active bits (no other rare
    # bit), plus exactly 20 common coordinates.
    assert not (rare & ~prototypes[y]).any()
    assert np.array_equal(rare.sum(axis=1), sizes[y] - 5)
    common = np.asarray((X[:, N_RARE:] != 0).sum(axis=1)).ravel()
    assert (common == 20).all()
    # ~30 rare ones per prototype (each of 120 on w.p. 1/4: 9 * 30 = 270 in
    # total, standard deviation sqrt(1080 * 3/16) = 14.2), ~45 ones per row.
    assert abs(sizes.sum() - 270) < 5 * 14.2
    assert abs(X.nnz / X.shape[0] - 45) < 5
    assert np.array_equal(np.diff(X.indptr), sizes[y] + 15)


def test_synsep_draws_are_uniform(synsep):
    X, y, rare, prototypes = synsep
    n = len(y)
    # Labels uniform over the 9 classes.
    freq = np.bincount(y, minlength=N_CLASSES) / n
    assert np.abs(freq - 1 / 9).max() < 5 * np.sqrt((1 / 9) * (8 / 9) / n)
    # Common coordinates: each on with probability 20/280.
    p = 20 / 280
    on = np.asarray((X[:, N_RARE:] != 0).mean(axis=0)).ravel()
    assert np.abs(on - p).max() < 5 * np.sqrt(p * (1 - p) / n)
    # Switched-off bits: each active bit of class c is off w.p. 5/|v_c|.
    for c in range(N_CLASSES):
        rows = rare[y == c][:, prototypes[c]]
        q = 5 / prototypes[c].sum()
        off = 1 - rows.mean(axis=0)
        assert np.abs(off - q).max() < 5 * np.sqrt(q * (1 - q) / len(rows))


def test_synsep_is_linearly_separable_by_the_prototypes(synsep):
    """W = (v_1, ..., v_k) separates SynSep with an integer margin >= 1."""
    X, y, rare, prototypes = synsep
    scores = rare.astype(np.int64) @ prototypes.T.astype(np.int64)
    true = scores[np.arange(len(y)), y]
    scores[np.arange(len(y)), y] = -1
    assert (true - scores.max(axis=1) >= 1).all()


def test_synsep_perceptron_stops_making_mistakes(synsep):
    """The full-information Perceptron converges: finitely many mistakes.

    Novikoff's bound for the multiclass Perceptron (Kesler construction):
    M <= 2 R^2 ||U||_F^2 / gamma^2 for any U separating with margin gamma;
    here U = the prototypes. After a first fifth of the stream the Perceptron
    makes (almost) no mistake (SOBA paper, Fig. 2: the error rate of the
    full-information Perceptron on SynSep falls like 1/T).
    """
    X, y, rare, prototypes = synsep
    scores = rare.astype(np.int64) @ prototypes.T.astype(np.int64)
    true = scores[np.arange(len(y)), y]
    scores[np.arange(len(y)), y] = -1
    gamma = (true - scores.max(axis=1)).min()
    R2 = np.diff(X.indptr).max()
    bound = 2 * R2 * prototypes.sum() / gamma**2

    n_burn = len(y) // 5
    clf = MulticlassPerceptron(random_state=0)
    clf.partial_fit(X[:n_burn], y[:n_burn], classes=np.arange(N_CLASSES))
    burn_in = clf.n_mistakes_
    clf.partial_fit(X[n_burn:], y[n_burn:])
    assert clf.n_mistakes_ <= bound
    # A handful at most over the last 80,000 rounds: 0 for 40% of the seeds
    # 0-39, at most 8 (a late example with a rare combination of bits).
    assert clf.n_mistakes_ - burn_in <= 10
    assert burn_in > 0


def test_synsep_dense_equals_sparse_and_is_deterministic():
    Xd, yd = make_synsep(3000, random_state=1)
    Xs, ys = make_synsep(3000, sparse=True, random_state=1)
    assert isinstance(Xd, np.ndarray) and Xd.dtype == np.float64
    assert np.array_equal(Xd, Xs.toarray()) and np.array_equal(yd, ys)
    X2, y2 = make_synsep(3000, random_state=1)
    assert np.array_equal(Xd, X2) and np.array_equal(yd, y2)
    X3, y3 = make_synsep(3000, random_state=2)
    assert not np.array_equal(Xd, X3)
    # RandomState and Generator seeds are accepted.
    make_synsep(10, random_state=np.random.RandomState(0))
    make_synsep(10, random_state=np.random.default_rng(0))


def test_synsep_options_and_small_prototypes():
    X, y = make_synsep(500, n_features=60, n_classes=3, n_rare=20, random_state=0)
    assert X.shape == (500, 60) and set(np.unique(y)) <= {0, 1, 2}
    assert ((X[:, 20:] != 0).sum(axis=1) == 20).all()
    # Prototypes with at most 5 active bits lose all of them.
    X, y = make_synsep(300, n_features=24, n_rare=4, sparse=True, random_state=0)
    assert X[:, :4].nnz == 0
    assert np.array_equal(np.diff(X.indptr), np.full(300, 20))
    X, y = make_synsep(0, sparse=True)
    assert X.shape == (0, N_FEATURES) and y.shape == (0,)


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"n_features": 139}, ValueError),  # fewer than 20 common coordinates
        ({"n_classes": 1}, ValueError),
        ({"n_rare": 0}, ValueError),
        ({"n_samples": -1}, ValueError),
        ({"n_samples": 10.0}, TypeError),
        ({"random_state": "seed"}, ValueError),
    ],
)
def test_synsep_rejects_bad_parameters(kwargs, error):
    kwargs = {"n_samples": 10, **kwargs}
    with pytest.raises(error):
        make_synsep(**kwargs)


def test_synnonsep_redraws_five_percent_of_labels():
    """5% of labels redrawn over all 9 classes: 4.44% of them change."""
    n = 100_000
    X, y = make_synnonsep(n, sparse=True, random_state=3)
    X0, y0 = make_synsep(n, sparse=True, random_state=3)
    assert (X != X0).nnz == 0
    changed = y != y0
    p = 0.05 * 8 / 9
    assert abs(changed.mean() - p) < 5 * np.sqrt(p * (1 - p) / n)
    # A changed label is uniform over the 8 other classes.
    pairs = np.bincount(y0[changed] * 9 + y[changed], minlength=81).reshape(9, 9)
    assert np.trace(pairs) == 0
    assert (pairs + np.eye(9, dtype=int) * 10**6).min() > 0
    # noise=0 is SynSep; noise=1 redraws every label uniformly.
    _, y_clean = make_synnonsep(2000, noise=0.0, random_state=3)
    assert np.array_equal(y_clean, make_synsep(2000, random_state=3)[1])
    _, y_all = make_synnonsep(9000, noise=1.0, random_state=3)
    y_ref = make_synsep(9000, random_state=3)[1]
    assert abs(np.mean(y_all != y_ref) - 8 / 9) < 5 * np.sqrt(8 / 81 / 9000)
    with pytest.raises(ValueError, match="noise"):
        make_synnonsep(10, noise=1.5)


# ---------------------------------------------------------------------------
# Separable-case streams (Beygelzimer et al., 2019)
# ---------------------------------------------------------------------------

W_STAR = np.array([[np.cos(a), np.sin(a)] for a in np.deg2rad([0.0, 30.0, -30.0])])


def _angle_law(margin: float, strong: bool, grid: int = 720_001):
    """Angles (deg), density of accepted points on the grid, inner-sector share.

    Derived from the paper's description: angle uniform in [-15, 15] w.p. 0.8
    else uniform in [15, 345]; radius 1 or U[0, 1]; accepted when the top-two
    gap of W* x is >= margin (for radius r the gap is r * g(angle), so a weak
    candidate at angle t is accepted w.p. max(0, 1 - margin / g(t))).
    """
    deg = np.linspace(-180.0, 180.0, grid)
    rad = np.deg2rad(deg)
    scores = np.column_stack([np.cos(rad), np.sin(rad)]) @ W_STAR.T
    top2 = np.sort(scores, axis=1)[:, -2:]
    gap = top2[:, 1] - top2[:, 0]
    inner = np.abs(deg) <= 15.0
    prior = np.where(inner, 0.8 / 30.0, 0.2 / 330.0)
    if strong:
        accept = (gap >= margin).astype(float)
    else:
        accept = np.clip(1.0 - margin / np.maximum(gap, 1e-300), 0.0, None)
    density = prior * accept
    return deg, density / density.sum(), float((density * inner).sum() / density.sum())


@pytest.mark.parametrize("strong", [True, False])
def test_separable_stream_margin_labels_and_norms(strong):
    margin = 0.05
    X, y = make_separable_stream(100_000, margin=margin, strong=strong, random_state=0)
    assert X.shape == (100_000, 3) and X.dtype == np.float64 and y.dtype == np.int64
    assert np.allclose(X[:, 2], 1 / np.sqrt(2))
    x = X[:, :2] * np.sqrt(2)
    scores = x @ W_STAR.T
    top2 = np.sort(scores, axis=1)[:, -2:]
    assert (top2[:, 1] - top2[:, 0] >= margin - 1e-12).all()
    assert np.array_equal(y, np.argmax(scores, axis=1))
    assert set(np.unique(y)) == {0, 1, 2}
    norms = np.linalg.norm(x, axis=1)
    mapped = np.linalg.norm(X, axis=1)
    if strong:
        assert np.allclose(norms, 1.0) and np.allclose(mapped, 1.0)
    else:
        assert (norms <= 1.0).all() and (mapped <= 1.0 + 1e-12).all()
        # Weak: radii spread over (margin, 1].
        assert norms.min() < 0.2 and norms.max() > 0.99

    # The 80/20 angle mixture, after rejection: share of the inner sector and
    # the whole angle distribution (Kolmogorov-Smirnov distance).
    deg, density, inner_share = _angle_law(margin, strong)
    angle = np.rad2deg(np.arctan2(x[:, 1], x[:, 0]))
    n = len(angle)
    share = np.mean(np.abs(angle) <= 15.0)
    assert abs(share - inner_share) < 5 * np.sqrt(inner_share * (1 - inner_share) / n)
    cdf = np.cumsum(density)
    empirical = np.searchsorted(np.sort(angle), deg, side="right") / n
    assert np.abs(empirical - cdf).max() < 2.0 / np.sqrt(n)


def test_separable_stream_without_margin_is_the_raw_mixture():
    X, _ = make_separable_stream(50_000, margin=0.0, random_state=1)
    angle = np.rad2deg(np.arctan2(X[:, 1], X[:, 0]))
    share = np.mean(np.abs(angle) <= 15.0)
    assert abs(share - 0.8) < 5 * np.sqrt(0.16 / 50_000)


def test_separable_stream_determinism_prefix_and_validation():
    X1, y1 = make_separable_stream(1000, random_state=5)
    X2, y2 = make_separable_stream(100_000, random_state=5)
    assert np.array_equal(X1, X2[:1000]) and np.array_equal(y1, y2[:1000])
    X3, _ = make_separable_stream(1000, random_state=6)
    assert not np.array_equal(X1, X3)
    X0, y0 = make_separable_stream(0)
    assert X0.shape == (0, 3) and y0.shape == (0,)
    for margin in (-0.1, 0.52, 1.0):
        with pytest.raises(ValueError, match="margin"):
            make_separable_stream(10, margin=margin)
    # Just below the largest possible gap, 2 sin(15 deg), still samples.
    X, y = make_separable_stream(5, margin=0.45, random_state=0)
    assert set(y) <= {1, 2}


# ---------------------------------------------------------------------------
# Loaders: offline copies in ../shared/data
# ---------------------------------------------------------------------------

# Prefix and suffix of each file's sha256, from ../shared/data/README.md.
SHA256 = {
    "usps.npz": ("91a7e071", "3850"),
    "t10k-images-idx3-ubyte.gz": ("16731000", "d80b"),
    "t10k-labels-idx1-ubyte.gz": ("fc607395", "da3c"),
    "covtype_small.csv": ("99b0fa4c", "9590"),
    "mini_newsgroups.tsv.gz": ("508abe07", "fd83"),
}


def _shared(name: str) -> Path:
    path = shared_data_file(name)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    prefix, suffix = SHA256[name]
    assert digest.startswith(prefix) and digest.endswith(suffix), (
        f"{name}: sha256 {digest} does not match ../shared/data/README.md"
    )
    return path


@pytest.fixture
def no_network(monkeypatch):
    """Fail on any socket connection and on any scikit-learn fetcher call."""

    def refuse(*args, **kwargs):
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    for name in (
        "fetch_openml",
        "fetch_covtype",
        "fetch_20newsgroups",
        "fetch_rcv1",
    ):
        monkeypatch.setattr(sklearn.datasets, name, refuse)
    monkeypatch.setattr(datasets_base, "_urlretrieve", refuse)


def _same_pairs(X_a, y_a, X_b, y_b) -> bool:
    """The rows of a shuffle are the rows of the original, labels attached."""
    key_a = sorted(zip(map(bytes, X_a.view(np.uint8)), y_a.tolist(), strict=True))
    key_b = sorted(zip(map(bytes, X_b.view(np.uint8)), y_b.tolist(), strict=True))
    return key_a == key_b


def test_fetch_usps_offline_copy(no_network):
    path = _shared("usps.npz")
    usps = fetch_usps(path=path)
    assert usps.data.shape == (9298, 256) and usps.target.shape == (9298,)
    assert usps.data.dtype == np.float64 and usps.target.dtype == np.int64
    assert usps.data.min() == 0.0 and usps.data.max() == 1.0
    assert np.array_equal(np.unique(usps.target), np.arange(10))
    assert list(usps.target_names) == list(range(10))
    with np.load(path) as npz:  # stream order: train, then test
        assert np.array_equal(usps.data[:7291], npz["X_train"])
        assert np.array_equal(usps.target[7291:], npz["y_test"])
    X_tr, y_tr = fetch_usps(path=str(path), subset="train", return_X_y=True)
    X_te, _ = fetch_usps(path=path, subset="test", return_X_y=True)
    assert X_tr.shape == (7291, 256) and X_te.shape == (2007, 256)
    assert np.array_equal(X_tr, usps.data[:7291])
    shuffled = fetch_usps(path=path, shuffle=True, random_state=0)
    assert not np.array_equal(shuffled.target, usps.target)
    assert _same_pairs(shuffled.data, shuffled.target, usps.data, usps.target)


def test_fetch_mnist_offline_copy(no_network, tmp_path):
    images = _shared("t10k-images-idx3-ubyte.gz")
    _shared("t10k-labels-idx1-ubyte.gz")
    mnist = fetch_mnist(path=images)
    assert mnist.data.shape == (10000, 784) and mnist.data.dtype == np.float64
    assert mnist.data.min() == 0.0 and mnist.data.max() == 1.0
    assert np.allclose(mnist.data * 255, np.rint(mnist.data * 255))
    assert mnist.target.dtype == np.int64
    # Class counts of the public MNIST test set.
    counts = [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
    assert np.bincount(mnist.target).tolist() == counts
    # The directory form, with the subset it holds.
    X, y = fetch_mnist(path=images.parent, subset="test", return_X_y=True)
    assert np.array_equal(X, mnist.data) and np.array_equal(y, mnist.target)
    with pytest.raises(FileNotFoundError, match="train-images"):
        fetch_mnist(path=images.parent, subset="all")
    with pytest.raises(ValueError, match="subset"):
        fetch_mnist(path=images, subset="train")
    # An images file whose labels file is absent.
    lonely = tmp_path / images.name
    lonely.write_bytes(images.read_bytes())
    with pytest.raises(FileNotFoundError, match="labels-idx1"):
        fetch_mnist(path=lonely)


def test_fetch_covtype_offline_copy(no_network):
    path = _shared("covtype_small.csv")
    cov = fetch_covtype(path=path)
    assert cov.data.shape == (10000, 54) and cov.data.dtype == np.float64
    assert cov.target.dtype == np.int64
    assert np.array_equal(np.unique(cov.target), np.arange(1, 8))
    assert len(cov.feature_names) == 54 and cov.feature_names[0] == "Elevation"
    assert "Cover_Type" not in cov.feature_names
    # The binary wilderness/soil columns (10-53) are 0/1; the others are not.
    assert np.isin(cov.data[:, 10:], [0.0, 1.0]).all()
    assert cov.data[:, 0].max() > 1000
    scaled = fetch_covtype(path=path, scale=True)
    low, high = scaled.data.min(axis=0), scaled.data.max(axis=0)
    constant = cov.data.min(axis=0) == cov.data.max(axis=0)
    assert np.all(low == 0.0)
    assert np.all(high[~constant] == 1.0) and np.all(high[constant] == 0.0)
    assert np.array_equal(scaled.data[:, 10:], cov.data[:, 10:] * ~constant[10:])


def test_fetch_20newsgroups_offline_copy(no_network):
    path = _shared("mini_newsgroups.tsv.gz")
    news = fetch_20newsgroups(path=path)
    assert isinstance(news.data, list) and len(news.data) == 2000
    assert all(isinstance(t, str) and t for t in news.data)
    assert news.target.dtype == np.int64 and news.target.shape == (2000,)
    assert len(news.target_names) == 20 and news.target_names == sorted(
        news.target_names
    )
    assert "sci.space" in news.target_names and "alt.atheism" in news.target_names
    assert np.bincount(news.target).tolist() == [100] * 20
    shuffled = fetch_20newsgroups(path=path, shuffle=True, random_state=0)
    assert sorted(zip(shuffled.data, shuffled.target.tolist(), strict=True)) == sorted(
        zip(news.data, news.target.tolist(), strict=True)
    )
    assert shuffled.target.tolist() != news.target.tolist()
    with pytest.raises(ValueError, match="subset"):
        fetch_20newsgroups(path=path, subset="train")


# ---------------------------------------------------------------------------
# Loaders: downloads and caches, faked (no network)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fetch",
    [fetch_usps, fetch_mnist, fetch_covtype, fetch_20newsgroups, fetch_rcv1_reuters4],
)
def test_nothing_cached_and_no_download_is_a_clear_error(fetch, tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(sklearn.datasets, "fetch_openml", refuse)
    monkeypatch.setattr(datasets_base, "_urlretrieve", refuse)
    with pytest.raises(OSError, match=r"download_if_missing=False.*path="):
        fetch(data_home=tmp_path, download_if_missing=False)


def test_cache_helpers_build_once_and_report_an_absent_cache(tmp_path):
    """``_cached_file`` builds a missing cache only when downloads are allowed;
    ``_missing_cache_error`` rewrites a fetcher's OSError only then too."""
    built = []

    def build(cache):
        built.append(cache)
        cache.parent.mkdir(parents=True)
        cache.write_bytes(b"x")

    kwargs = {"name": "Toy", "hint": "a toy file"}
    with pytest.raises(OSError, match=r"Toy not found .*download_if_missing=False"):
        datasets_base._cached_file(
            tmp_path, "toy.bin", build, download_if_missing=False, **kwargs
        )
    assert built == []
    for _ in range(2):
        cache = datasets_base._cached_file(
            tmp_path, "toy.bin", build, download_if_missing=True, **kwargs
        )
    assert cache == tmp_path / "skbandit" / "toy.bin" and built == [cache]

    with pytest.raises(OSError, match="^boom$"):
        with datasets_base._missing_cache_error("Toy", "a toy file", True):
            raise OSError("boom")
    with pytest.raises(OSError, match="a toy file") as info:
        with datasets_base._missing_cache_error(
            "Toy", "a toy file", False, where=tmp_path
        ):
            raise OSError("boom")
    assert str(tmp_path) in str(info.value)
    assert str(info.value.__cause__) == "boom"


def test_get_data_home(tmp_path, monkeypatch):
    assert get_data_home(tmp_path) == tmp_path / "skbandit"
    monkeypatch.setenv("SCIKIT_LEARN_DATA", str(tmp_path / "env"))
    assert get_data_home() == tmp_path / "env" / "skbandit"


def test_fetch_usps_download_converts_and_caches(tmp_path, monkeypatch):
    """The LIBSVM files (labels 1-10, pixels in [-1, 1]) become digits, [0, 1]."""
    files = {
        "usps.bz2": "1 1:-1 2:0.5 256:1\n10 1:1\n",
        "usps.t.bz2": "3 2:-0.5\n",
    }
    payloads = {name: bz2.compress(text.encode()) for name, text in files.items()}
    remotes = tuple(
        (f"https://example.invalid/{name}", name, hashlib.md5(data).hexdigest())
        for name, data in payloads.items()
    )
    calls = []

    def fake_urlretrieve(url, filename):
        calls.append(url)
        Path(filename).write_bytes(payloads[url.rsplit("/", 1)[1]])

    monkeypatch.setattr(digit_loaders, "_USPS_REMOTES", remotes)
    monkeypatch.setattr(datasets_base, "_urlretrieve", fake_urlretrieve)
    usps = fetch_usps(data_home=tmp_path)
    assert len(calls) == 2
    assert usps.target.tolist() == [0, 9, 2]
    assert usps.data.shape == (3, 256)
    assert usps.data[0, :3].tolist() == [0.0, 0.75, 0.5] and usps.data[0, 255] == 1.0
    assert usps.data[1, 0] == 1.0 and usps.data[2, 1] == 0.25
    cache = tmp_path / "skbandit" / "usps.npz"
    assert cache.is_file()
    assert sorted(p.name for p in cache.parent.iterdir()) == ["usps.npz"]
    # Second call: read from the cache, no download.
    again = fetch_usps(data_home=tmp_path, subset="test", download_if_missing=False)
    assert len(calls) == 2 and again.target.tolist() == [2]
    # A corrupted download is refused and leaves nothing behind.
    cache.unlink()
    bad = ((remotes[0][0], remotes[0][1], "0" * 32), remotes[1])
    monkeypatch.setattr(digit_loaders, "_USPS_REMOTES", bad)
    with pytest.raises(OSError, match="MD5"):
        fetch_usps(data_home=tmp_path)
    assert list(cache.parent.iterdir()) == []


def test_fetch_mnist_through_openml_is_cached(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 256, size=(7, 784)).astype(np.float64)
    y = np.array(list("0123456"), dtype=object)
    calls = []

    def fake_openml(name, **kwargs):
        calls.append((name, kwargs))
        return X, y

    monkeypatch.setattr(sklearn.datasets, "fetch_openml", fake_openml)
    monkeypatch.setattr(digit_loaders, "_MNIST_N_TRAIN", 5)
    mnist = fetch_mnist(data_home=tmp_path)
    assert calls[0][0] == "mnist_784" and calls[0][1]["data_home"] == tmp_path
    assert np.allclose(mnist.data * 255, X) and mnist.target.tolist() == list(range(7))
    assert (tmp_path / "skbandit" / "mnist.npz").is_file()
    X_te, y_te = fetch_mnist(data_home=tmp_path, subset="test", return_X_y=True)
    assert len(calls) == 1 and y_te.tolist() == [5, 6]
    assert fetch_mnist(data_home=tmp_path, subset="train").data.shape == (5, 784)


def test_fetch_covtype_and_20newsgroups_delegate_to_sklearn(tmp_path, monkeypatch):
    seen = {}

    def fake_covtype(**kwargs):
        seen["covtype"] = kwargs
        return Bunch(
            data=np.array([[2.0, 0.0], [4.0, 1.0]]),
            target=np.array([7, 1], dtype=np.int32),
            feature_names=["Elevation", "Wilderness_Area1"],
        )

    def fake_news(**kwargs):
        seen["news"] = kwargs
        return Bunch(data=["b", "a"], target=np.array([1, 0]), target_names=["x", "y"])

    monkeypatch.setattr(sklearn.datasets, "fetch_covtype", fake_covtype)
    monkeypatch.setattr(sklearn.datasets, "fetch_20newsgroups", fake_news)
    cov = fetch_covtype(data_home=tmp_path, scale=True)
    assert seen["covtype"]["data_home"] == tmp_path
    assert cov.data.tolist() == [[0.0, 0.0], [1.0, 1.0]]
    assert cov.target.dtype == np.int64 and cov.target.tolist() == [7, 1]
    news = fetch_20newsgroups(data_home=tmp_path, subset="test")
    assert seen["news"]["subset"] == "test" and seen["news"]["shuffle"] is False
    assert news.data == ["b", "a"] and news.target_names == ["x", "y"]


def _fake_rcv1() -> Bunch:
    """Seven documents over a few RCV1 topics (ancestors included)."""
    names = np.array(["C15", "CCAT", "E21", "ECAT", "GCAT", "GSPO", "MCAT"])
    topics = {
        0: ["CCAT", "C15"],  # kept: CCAT
        1: ["CCAT", "ECAT"],  # two top-level topics: dropped
        2: ["GCAT", "GSPO"],  # kept: GCAT
        3: ["E21"],  # no top-level topic among the four: dropped
        4: ["MCAT"],  # kept: MCAT
        5: ["ECAT", "E21"],  # kept: ECAT
        6: ["CCAT", "ECAT", "GCAT", "MCAT"],  # dropped
    }
    target = np.zeros((7, len(names)), dtype=np.uint8)
    for doc, tags in topics.items():
        target[doc, [list(names).index(t) for t in tags]] = 1
    data = sp.csr_matrix(np.arange(7 * 5, dtype=float).reshape(7, 5) / 100)
    return Bunch(
        data=data,
        target=sp.csr_matrix(target),
        target_names=names,
        sample_id=np.arange(100, 107, dtype=np.uint32),
    )


def test_fetch_rcv1_reuters4_filters_and_caches(tmp_path, monkeypatch):
    calls = []

    def fake_rcv1(**kwargs):
        calls.append(kwargs)
        return _fake_rcv1()

    monkeypatch.setattr(sklearn.datasets, "fetch_rcv1", fake_rcv1)
    monkeypatch.setattr(text_loaders, "_RCV1_N_TRAIN", 3)
    reuters = fetch_rcv1_reuters4(data_home=tmp_path)
    assert calls == [
        {"data_home": tmp_path, "subset": "all", "download_if_missing": True}
    ]
    assert reuters.target_names == ["CCAT", "ECAT", "GCAT", "MCAT"]
    assert reuters.sample_id.tolist() == [100, 102, 104, 105]
    assert reuters.target.tolist() == [0, 2, 3, 1]
    assert reuters.target.dtype == np.int64 and sp.issparse(reuters.data)
    full = _fake_rcv1().data.toarray()
    assert np.array_equal(reuters.data.toarray(), full[[0, 2, 4, 5]])

    # The cache answers the next calls, with the LYRL2004 split kept.
    cache = tmp_path / "skbandit" / "rcv1_reuters4.npz"
    assert cache.is_file()
    monkeypatch.setattr(sklearn.datasets, "fetch_rcv1", None)
    train = fetch_rcv1_reuters4(data_home=tmp_path, subset="train")
    test = fetch_rcv1_reuters4(data_home=tmp_path, subset="test")
    assert train.sample_id.tolist() == [100, 102]
    assert test.sample_id.tolist() == [104, 105]

    # path= reads the cache format, and an svmlight file of the codes 0-3.
    X, y = fetch_rcv1_reuters4(path=cache, return_X_y=True)
    assert np.array_equal(X.toarray(), reuters.data.toarray())
    svm = tmp_path / "reuters4.svm"
    sklearn.datasets.dump_svmlight_file(reuters.data, reuters.target, str(svm))
    from_svm = fetch_rcv1_reuters4(path=svm)
    assert from_svm.data.shape == (4, 47236)
    assert np.array_equal(from_svm.data[:, :5].toarray(), reuters.data.toarray())
    assert from_svm.target.tolist() == [0, 2, 3, 1]
    with pytest.raises(ValueError, match="subset"):
        fetch_rcv1_reuters4(path=svm, subset="train")
    shuffled = fetch_rcv1_reuters4(path=cache, shuffle=True, random_state=1)
    order = np.argsort(shuffled.sample_id)
    assert np.array_equal(shuffled.target[order], reuters.target)
    assert np.array_equal(shuffled.data[order].toarray(), reuters.data.toarray())


def test_loaders_reject_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="subset"):
        fetch_usps(path=tmp_path / "x.npz", subset="validation")
    with pytest.raises(FileNotFoundError):
        fetch_usps(path=tmp_path / "missing.npz")
    bad = tmp_path / "bad.npz"
    np.savez(bad, X_train=np.zeros((1, 256)))
    with pytest.raises(ValueError, match="missing arrays"):
        fetch_usps(path=bad)
    csv = tmp_path / "bad.csv"
    csv.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="Cover_Type"):
        fetch_covtype(path=csv)
    tsv = tmp_path / "bad.tsv"
    tsv.write_text("group\tbody\n")
    with pytest.raises(ValueError, match="header"):
        fetch_20newsgroups(path=tsv)
    not_idx = tmp_path / "t10k-images-idx3-ubyte"
    not_idx.write_bytes(b"hello world")
    (tmp_path / "t10k-labels-idx1-ubyte").write_bytes(b"hello world")
    with pytest.raises(ValueError, match="IDX"):
        fetch_mnist(path=not_idx)


def test_synsep_needs_room_for_the_common_coordinates():
    """Each row switches on 20 common coordinates beyond the ``n_rare`` rare
    ones (Kakade et al. 2008), so ``n_features`` must be at least ``n_rare +
    20``: one fewer is refused, exactly that many is accepted."""
    with pytest.raises(ValueError, match="n_features"):
        make_synsep(10, n_features=39, n_rare=20, random_state=0)
    X, _ = make_synsep(10, n_features=40, n_rare=20, random_state=0)
    assert X.shape == (10, 40)
