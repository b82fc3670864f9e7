"""benchmarks/bench_live.py runs end to end (no timing is asserted)."""

from __future__ import annotations

from _helpers import BENCHMARKS, run_benchmark


def test_bench_live_smoke_run():
    out = run_benchmark(
        "bench_live.py",
        "--rounds", "200", "--repeat", "1",
        "--hashed-bits", "10", "--hashed-rounds", "60", "--soba-rounds", "60",
        cwd=BENCHMARKS,
    )  # fmt: skip
    rows = [ln for ln in out.stdout.splitlines() if ln.startswith("skbandit Banditron")]
    assert len(rows) == 3
    for name in ("SquareCB", "OnlineSelector"):
        for form in ("dense", "CSR"):
            assert f"skbandit {name} live loop, {form} row" in out.stdout
    # the live loop plays the simulator's actions: the same online error
    errors = {ln.split()[-3] for ln in rows}  # the column before "x VW"
    assert len(errors) == 1, rows
    # the hashed table has a row per learner
    assert "Hashed sparse rows d=2**10 k=20" in out.stdout
    for name in ("Banditron", "SeparableOneVsAll", "SquareCB", "OffsetTree"):
        assert any(ln.startswith(name + " ") for ln in out.stdout.splitlines()), name
    # the small SOBA table has both variants
    for cov in ("diag", "full"):
        assert f'SOBA covariance="{cov}"' in out.stdout
