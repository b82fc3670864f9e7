"""The README's code example and the quick-start example run as documented."""

from __future__ import annotations

import re
import runpy
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_readme_python_example_runs(capsys):
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "README.md has no python example"
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})
    out = capsys.readouterr().out
    errors = [float(v) for v in re.findall(r"online error: ([0-9.]+)", out)]
    # Banditron on 1,797 digits, then the full-information Perceptron: both below
    # the 0.9 of uniform guessing, and full information strictly better.
    assert len(errors) == 2
    assert errors[1] < errors[0] < 0.9


def test_readme_quick_start_matches_ci():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    commands = [
        line.strip() for line in readme.splitlines() if line.startswith("python -m pip")
    ]
    quick_start = readme.split("## Quick start")[1].split("\n## ")[0]
    assert [c for c in commands if c in quick_start] == commands[:2], (
        "the quick start has exactly two commands: run, test"
    )
    assert len(commands) == 3, "run, test (quick start) and the docs build"
    assert commands[1] in ci, ".ci/run must run the README's test command"
    assert commands[2] in ci, ".ci/run must run the README's docs command"
    # CI builds the docs after the tests (the test command's line comes first).
    assert ci.index(commands[1]) < ci.index(commands[2])


@pytest.mark.parametrize("argv", [[], ["--seeds", "2", "--epsilon", "0.3"]])
def test_quickstart_example_runs(argv, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["quickstart.py", *argv])
    with pytest.raises(SystemExit) as exc:
        runpy.run_path(str(ROOT / "examples" / "quickstart.py"), run_name="__main__")
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "MulticlassPerceptron" in out and "Banditron" in out
