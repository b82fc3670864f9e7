"""examples/plot_live_recommendation.py runs (on the local Mini 20 Newsgroups copy)."""

from __future__ import annotations

import os
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NEWS = ROOT.parent / "shared" / "data" / "mini_newsgroups.tsv.gz"


@pytest.mark.skipif(not NEWS.is_file(), reason="no local copy of the newsgroups")
def test_live_recommendation_example_runs(monkeypatch, capsys):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.setitem(os.environ, "SKBANDIT_NEWS_TSV", str(NEWS))
    runpy.run_path(str(ROOT / "examples" / "plot_live_recommendation.py"))
    out = capsys.readouterr().out
    assert out.count("true value") == 2
    assert "online click rate" in out
