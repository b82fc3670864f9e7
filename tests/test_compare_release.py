"""``benchmarks/compare_release.py``: the comparison of two versions' reports
(the cloning and installing is exercised by running it, not here)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from _helpers import BENCHMARKS


@pytest.fixture(scope="module")
def cr():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import compare_release
    finally:
        sys.path.remove(str(BENCHMARKS))
    return compare_release


def _report(*rows):
    return {
        "results": [
            {"learner": name, "input": "csr", "status": status,
             "rounds_per_s": speed, "online_error": err}
            for name, status, speed, err in rows
        ]
    }  # fmt: skip


def test_compare_best_of_each_side_and_pair_ratios(cr):
    # Catches: the ratio inverted (previous / this), the worst pass kept
    # instead of the best, passes paired across sides in the wrong order, a
    # failed row's speed used, a behaviour change not flagged.
    passes = [
        {
            "previous": _report(("A", "ok", 100.0, 0.1), ("B", "ok", 10.0, 0.5)),
            "this": _report(("A", "ok", 300.0, 0.1), ("B", "FAILED x", 999.0, None)),
        },
        {
            "previous": _report(("A", "ok", 200.0, 0.1), ("B", "ok", 20.0, 0.5)),
            "this": _report(("A", "ok", 250.0, 0.1), ("B", "ok", 30.0, 0.4)),
        },
    ]
    rows = {r["learner"]: r for r in cr.compare(passes)}
    a, b = rows["A"], rows["B"]
    assert (a["previous"], a["this"]) == (200.0, 300.0)
    assert a["ratio"] == pytest.approx(1.5)
    assert a["pair_ratios"] == [pytest.approx(3.0), pytest.approx(1.25)]
    assert a["same_error"] is True
    assert (b["previous"], b["this"]) == (20.0, 30.0)
    assert b["pair_ratios"] == [None, pytest.approx(1.5)]
    assert b["same_error"] is False
    table = cr.format_table(cr.compare(passes))
    assert "1.50" in table and "differ" in table and "same" in table


def test_compare_row_missing_on_one_side(cr):
    # a learner the previous version does not have (its script skipped it)
    passes = [
        {
            "previous": _report(("A", "ok", 100.0, 0.1)),
            "this": _report(("A", "ok", 100.0, 0.1), ("New", "ok", 50.0, 0.2)),
        }
    ]
    new = next(r for r in cr.compare(passes) if r["learner"] == "New")
    assert new["previous"] is None and new["ratio"] is None
    assert new["same_error"] is None
    assert "New" in cr.format_table(cr.compare(passes))


def test_resolve_ref(cr):
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=BENCHMARKS, capture_output=True, text=True,
        check=True,
    ).stdout.strip()  # fmt: skip
    assert cr.resolve_ref("HEAD") == ("HEAD", head)
    with pytest.raises(SystemExit, match="not a commit"):
        cr.resolve_ref("no-such-ref-anywhere")
