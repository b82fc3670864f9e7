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
