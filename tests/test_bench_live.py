"""benchmarks/bench_live.py runs end to end (no timing is asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_live.py"


def test_bench_live_smoke_run():
    out = subprocess.run(
        [sys.executable, str(BENCH), "--rounds", "200", "--repeat", "1"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=BENCH.parent,
    )
    assert out.returncode == 0, out.stderr
    rows = [ln for ln in out.stdout.splitlines() if ln.startswith("skbandit")]
    assert len(rows) == 3
    # the live loop plays the simulator's actions: the same online error
    errors = {ln.split()[-1] for ln in rows}
    assert len(errors) == 1, rows
