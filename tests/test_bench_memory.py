"""``benchmarks/bench_memory.py``: its sizes and its peak measurement are right,
and the script runs end to end (no figure of skbandit's is asserted here)."""

from __future__ import annotations

import json
import sys
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from _helpers import BENCHMARKS, run_benchmark

from skbandit import Banditron, LoggedFeedback, OnlineSelector

MIB = 2**20


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import bench_memory
    finally:
        sys.path.remove(str(BENCHMARKS))
    return bench_memory


class _Model:
    """A stand-in learner: one 8 MiB state array, calls of known allocation."""

    _state_attrs = ("w_", "t_")

    def __init__(self):
        self.w_ = np.ones(MIB)  # 8 MiB
        self.t_ = 0

    def nothing(self):
        self.t_ += 1

    def snapshot(self):  # a rollback copy held during the call
        saved = self.w_.copy()
        self.w_ += 1.0
        del saved

    def temporary_then_free(self):  # 16 MiB at the peak, nothing at the end
        tmp = np.ones(2 * MIB)
        tmp += 1.0
        del tmp

    def replace(self):  # a new state array; the old one is freed
        self.w_ = self.w_ + 1.0


def _measured(bench, method: str) -> dict:
    tracemalloc.start()
    try:
        model = _Model()  # built while tracing, as run_case does
        return bench.measure_call(model, getattr(model, method))
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    "method, extra_mib",
    [("nothing", 0), ("snapshot", 8), ("temporary_then_free", 16), ("replace", 8)],
)
def test_measure_call_counts_what_the_call_allocates(bench, method, extra_mib):
    # Catches: the memory that existed before the call counted as extra (the
    # baseline not subtracted: "nothing" reads 8 MiB), the traced memory at
    # the end read instead of the peak ("temporary_then_free" reads 0).
    out = _measured(bench, method)
    assert abs(out["extra"] - extra_mib * MIB) < 64 * 1024, out
    assert out["model0"] == out["model1"] == 8 * MIB
    assert out["seconds"] >= 0


def test_model_nbytes_counts_what_get_state_copies(bench):
    # Catches: an OnlineSelector counted without its candidates' states.
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(50, 7)), rng.integers(0, 3, 50)
    for est in (Banditron(random_state=0), OnlineSelector(random_state=0)):
        est.partial_fit(X, y, classes=[0, 1, 2])

        def walk(state):
            return sum(
                walk(v) if isinstance(v, dict) else getattr(v, "nbytes", 0)
                for v in state.values()
                if isinstance(v, (dict, np.ndarray))
            )

        assert bench.model_nbytes(est) == walk(est._get_state()) > 0


def test_input_nbytes(bench):
    X = sp.random(3, 50, density=0.1, format="csr", random_state=0)
    csr = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    y = np.array([0, 1, 0])
    assert bench.input_nbytes(X, y) == csr + y.nbytes
    assert bench.input_nbytes(X.toarray(), y) == 3 * 50 * 8 + y.nbytes
    logged = LoggedFeedback([0, 1, 1], [1.0, 0.0, 1.0], [0.5, 0.5, 0.25])
    assert bench.input_nbytes(X, logged) == csr + 3 * 8 + 3 * 8 + 3 * 8


def test_bench_memory_smoke_run(tmp_path):
    path = tmp_path / "mem.json"
    out = run_benchmark(
        "bench_memory.py",
        "--row-bits", "8", "--batch-bits", "6", "--batch-rows", "300",
        "--soba-full-bits", "5", "--warmup", "20", "--json", str(path),
        "--learners", "Banditron", "MulticlassPerceptron", "SOBA",
    )  # fmt: skip
    assert "FAILED" not in out.stdout
    rows = json.loads(path.read_text())
    # 4 cases x 4 learners (SOBA, its full variant, Banditron, the perceptron)
    assert len(rows) == 16
    skipped = [r for r in rows if r["status"] != "ok"]
    assert {r["learner"] for r in skipped} == {"MulticlassPerceptron"}
    assert {r["case"] for r in skipped} == {
        "logged row d=2**8",
        "logged batch 300 dense d=2**6",
    }
    for r in rows:
        if r["status"] == "ok":
            assert r["extra"] >= 0 and r["model"] > 0 and r["input"] > 0
            assert r["ratio"] == pytest.approx(r["peak"] / (r["model"] + r["input"]))
    full = [r for r in rows if r["learner"] == "SOBA(covariance='full')"]
    assert {r["d"] for r in full} == {32}
    assert "SOBA(covariance='full') [d=2**5]" in out.stdout
