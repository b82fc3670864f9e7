"""The evidence protocol's stream suite (benchmarks/streams.py): disjoint lists,
reproducible streams, and a drift generator that really redraws the concept."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from _helpers import BENCHMARKS

sys.path.insert(0, str(BENCHMARKS))
streams = pytest.importorskip("streams")


def test_tuning_and_validation_are_disjoint():
    tuning = {s.name for s in streams.TUNING}
    validation = {s.name for s in streams.VALIDATION}
    assert tuning and validation and not tuning & validation
    # no source (data set or generator setting) in both lists
    assert not {s.source for s in streams.TUNING} & {
        s.source for s in streams.VALIDATION
    }


@pytest.mark.parametrize("name", ["digits", "imbalanced-k5", "drift-k9"])
def test_a_stream_is_reproducible_and_seeds_differ(name):
    X0, y0 = streams.load_stream(name, 0)
    X1, y1 = streams.load_stream(name, 0)
    X2, y2 = streams.load_stream(name, 1)
    assert np.array_equal(y0, y1)
    assert not np.array_equal(y0, y2)
    assert X0.shape == X2.shape


def test_drift_redraws_the_prototypes_every_segment():
    """Each segment's rows come from new prototypes: the rare coordinates a
    class switches on differ between two segments, and agree within one."""
    parts = list(streams.drifting_synnonsep_chunks(6000, 2000, random_state=3))
    assert [len(y) for _, y in parts] == [2000, 2000, 2000]

    def rare_profile(X, y, c, rows):
        Xc = X[rows][y[rows] == c][:, :120]
        return np.asarray(Xc.mean(axis=0)).ravel() > 0.5

    X0, y0 = parts[0]
    X1, y1 = parts[1]
    first, second = slice(0, 1000), slice(1000, 2000)
    for c in range(3):
        same = rare_profile(X0, y0, c, first) == rare_profile(X0, y0, c, second)
        changed = rare_profile(X0, y0, c, first) != rare_profile(X1, y1, c, first)
        assert same.mean() > 0.95
        assert changed.sum() >= 5


def _family(stream):
    """The generator (builder factory) a stream is made by."""
    return stream.build.__qualname__.split(".")[0]


def test_probe2_uses_generator_families_no_other_suite_uses():
    """PROBE2 was committed as fresh evidence: none of its generators (nor its
    names or sources) appears in another suite but the later report-only
    PROBE3, which reuses one family at other settings (and no name or
    source of any suite)."""
    later = ("probe2", "probe3")
    others = [s for k, v in streams.SUITES.items() if k not in later for s in v]
    probe2 = streams.SUITES["probe2"]
    assert probe2
    assert not {_family(s) for s in probe2} & {_family(s) for s in others}
    assert not {s.name for s in probe2} & {s.name for s in others}
    assert not {s.source for s in probe2} & {s.source for s in others}
    probe3 = streams.SUITES["probe3"]
    rest = [s for k, v in streams.SUITES.items() if k != "probe3" for s in v]
    assert not {s.name for s in probe3} & {s.name for s in rest}
    assert not {s.source for s in probe3} & {s.source for s in rest}


def test_probe3_streams_are_dense_with_many_classes():
    """PROBE3 holds dense streams of 5 to 26 classes, each class present."""
    for s in streams.SUITES["probe3"]:
        X, y = streams.load_stream(s.name, 0, suite="probe3")
        assert isinstance(X, np.ndarray) and np.isfinite(X).all()
        k = len(np.unique(y))
        assert 5 <= k <= 26 and np.bincount(y).min() > 0


@pytest.mark.parametrize("name", ["blobs-k3-d4", "blobs-k6-d7-imb", "keywords-k10"])
def test_a_probe2_stream_is_reproducible_and_seeds_differ(name):
    X0, y0 = streams.load_stream(name, 0, suite="probe2")
    X1, y1 = streams.load_stream(name, 0, suite="probe2")
    X2, y2 = streams.load_stream(name, 1, suite="probe2")
    assert np.array_equal(y0, y1) and not np.array_equal(y0, y2)
    assert (X0 != X1).nnz == 0 if hasattr(X0, "nnz") else np.array_equal(X0, X1)
    assert X0.shape[1] == X2.shape[1]


def test_blobs_follow_their_class_weights_and_offsets():
    X, y = streams.load_stream("blobs-k6-d7-imb", 0, suite="probe2")
    share = np.bincount(y, minlength=6) / len(y)
    assert np.allclose(share, np.array([8, 4, 2, 2, 1, 1]) / 18, atol=0.04)
    assert np.all(X.mean(axis=0) > 0)  # offset columns, then positive scales


def test_glyph_images_carry_their_class():
    """Digit-like images: integers in 0..16, and the class means separate the
    classes (nearest class mean, fitted on the first half, right on most of the
    second half)."""
    X, y = streams.load_stream("glyphs-k10", 0, suite="probe2")
    assert X.shape == (3000, 100)
    assert np.array_equal(X, np.rint(X)) and X.min() >= 0 and X.max() <= 16
    half = len(y) // 2
    means = np.stack([X[:half][y[:half] == c].mean(axis=0) for c in range(10)])
    d = ((X[half:, None, :] - means[None]) ** 2).sum(axis=2)
    assert np.mean(d.argmin(axis=1) == y[half:]) > 0.7  # chance: 0.1
