"""Every experiment can run every learner it lists; every committed
``results.json`` replays (recorded parameter names translated) and reproduces
its rows; the docs' tables are those of the committed runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import shared_data_file

from skbandit.base import BaseBanditClassifier
from skbandit.experiments import EXPERIMENTS, rerun, run_config
from skbandit.experiments._cli import main
from skbandit.experiments._doctables import _MARKED, render_tables
from skbandit.experiments._learners import make_learner, vw_available
from skbandit.experiments._replay import replay_config, verify_rows
from skbandit.experiments._result import ExperimentResult
from skbandit.experiments._runner import expand_learners
from skbandit.experiments._specs import (
    LearnerSpec,
    param_points,
    upgrade_config,
    upgrade_params,
)
from skbandit.exploration import EpsilonGreedy, GapMap, InverseGap, Softmax
from skbandit.optim import AdaGrad, Constant, Normalized

ROOT = Path(__file__).resolve().parents[1]
#: the committed experiment results (other results.json files under
#: docs/results are benchmark outputs, with no experiment configuration)
RESULTS = sorted(
    p
    for p in (ROOT / "docs" / "results").glob("*/results.json")
    if "config" in json.loads(p.read_text())
)
#: Recorded before a change of a default (to be re-run with ``skbandit rerun``):
#: they replay without a skip, but those rows differ.
DIVERGED: dict[str, str] = {}


def _points(config):
    """(data set, label, name, parameters) of every setting of a config."""
    for learner in expand_learners(config["learners"]):
        for dataset in config["datasets"]:
            for params in param_points(learner, dataset):
                yield dataset, learner["label"], learner["name"], params


def _tiny_fit(estimator) -> None:
    rng = np.random.default_rng(0)
    X = rng.random((6, 4)) / 2.0  # row norms below 1 (the rational kernel)
    estimator.partial_fit(X, np.array([0, 1, 2, 0, 1, 2]), classes=np.arange(3))


@pytest.mark.parametrize("quick", [False, True], ids=["full", "quick"])
@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_every_spec_learner_constructs_and_learns(name, quick):
    """``skbandit run NAME [--quick]`` can run every learner setting it lists,
    on every data set (its parameters as the spec writes them: no
    translation), without running the experiment."""
    config = EXPERIMENTS[name].config(quick=quick)
    points = list(_points(config))
    assert points
    for dataset, label, learner, params in points:
        if learner == "vw" and not vw_available():
            continue
        estimator = make_learner(learner, params, seed=0)  # raises if refused
        if isinstance(estimator, BaseBanditClassifier):
            _tiny_fit(estimator)
            assert estimator.t_ == 6, (dataset, label, params)


def test_chen2009_offset_tree_plays_epsilon_greedy_01():
    """The spec's Offset Tree rows play the paper's setting, an epsilon-greedy
    rule of rate 0.1 (the rule object's plays, bit for bit)."""
    from skbandit import OffsetTree

    rows = [
        lrn
        for lrn in EXPERIMENTS["chen2009-table1"].learners
        if lrn.name == "OffsetTree"
    ]
    assert len(rows) == 3
    rng = np.random.default_rng(1)
    X, y = rng.random((300, 5)), rng.integers(0, 4, 300)
    for spec in rows:
        built = make_learner("OffsetTree", dict(spec.params), seed=3)
        update, C = spec.params["update"], spec.params["C"]
        rule = OffsetTree(
            update=update, C=C, exploration=EpsilonGreedy(0.1), random_state=3
        )
        _, p_built = built.partial_fit(X, y, classes=np.arange(4)).sample_actions(X)
        _, p_rule = rule.partial_fit(X, y, classes=np.arange(4)).sample_actions(X)
        np.testing.assert_array_equal(p_built, p_rule)
        assert p_built.max() == pytest.approx(0.9 + 0.1 / 4)


@pytest.mark.parametrize(
    ("name", "old", "new"),
    [
        ("Banditron", {"gamma": 0.3}, {"exploration": EpsilonGreedy(0.3)}),
        ("SOBA", {"gamma": "adaptive"}, {"exploration": EpsilonGreedy("adaptive")}),
        ("PNewtron", {"gamma": 0.05}, {"exploration": Softmax(0.05)}),
        ("PNewtron", {"alpha": 3.0}, {"scale": 3.0}),
        (
            "Gaptron",
            {"gamma": "auto", "eta": 0.1},
            {"exploration": GapMap(), "step_size": Constant(0.1)},
        ),
        (
            "Gaptron",
            {"learning_rate": "adagrad", "adagrad_scale": 64.0},
            {"step_size": AdaGrad(64.0, per_coordinate=False)},
        ),
        ("Gaptron", {"learning_rate": "auto"}, {"step_size": "constant"}),
        (
            "SquareCB",
            {"regressor": "adagrad", "learning_rate": 0.1},
            {"step_size": AdaGrad(0.1)},
        ),
        ("SquareCB", {"regressor": "sgd"}, {"step_size": "constant"}),
        ("SquareCB", {"learning_rate": 0.25}, {"step_size": Normalized(0.25)}),
        (
            "OffsetTree",
            {"base": "pa2", "exploration": 0.1},
            {"update": "pa2", "exploration": EpsilonGreedy(0.1)},
        ),
        ("ConservativeOneVsAll", {"variant": "pa1"}, {"update": "pa1"}),
        ("SeparableOneVsAll", {"update": "full"}, {"update_scope": "all"}),
        ("SeparableOneVsAll", {"update": "paper"}, {"update_scope": "played"}),
        (
            "SquareCB",
            {"gamma_scale": 30.0, "gamma_exponent": 0.5},
            {"exploration": InverseGap(30.0, exponent=0.5)},
        ),
        (
            "OnlineSelector",
            {"exploration": 0.2, "exploration_decay": 0.25, "min_exploration": 0.01},
            {"exploration": EpsilonGreedy(0.2, decay=0.25, min_epsilon=0.01)},
        ),
    ],
)
def test_recorded_names_translate_to_the_changelogs_rules(name, old, new):
    """The translation of recorded parameters is the CHANGELOG's table of
    renames: the translated learner has the same parameters as the one
    written with today's names and rule objects."""
    import skbandit

    translated = make_learner(name, upgrade_params(name, old), seed=0)
    expected = getattr(skbandit, name)(**new, random_state=0)

    def nested(est):
        params = est.get_params(deep=True)
        rules = {key: params.pop(key, None) for key in ("exploration", "step_size")}
        return params, rules

    assert nested(translated)[0] == nested(expected)[0]
    for key, t_rule in nested(translated)[1].items():
        e_rule = nested(expected)[1][key]
        if hasattr(t_rule, "get_params"):  # set through a rule: compare its values
            assert type(t_rule) is type(e_rule)
            assert t_rule.get_params() == e_rule.get_params()
        else:  # a name (or None): the same
            assert t_rule == e_rule


@pytest.mark.parametrize("path", RESULTS, ids=lambda p: p.parent.name)
def test_every_committed_result_resolves_every_recorded_row(path):
    """A committed results.json: every learner setting of its configuration
    constructs (recorded names translated; nothing skipped), and the settings
    are exactly those of its recorded rows, so a replay makes every row."""
    stored = json.loads(path.read_text())
    config = replay_config(stored)
    settings = set()
    for dataset, label, learner, params in _points(config):
        if learner == "vw" and not vw_available():
            continue
        make_learner(learner, params, seed=0)
        settings.add((dataset, label, json.dumps(params, sort_keys=True)))
    recorded = {
        (
            r["dataset"],
            r["learner"],
            json.dumps(upgrade_params(r["name"], r["params"]), sort_keys=True),
        )
        for r in stored["rows"]
        if r["name"] != "vw" or vw_available()
    }
    assert settings == recorded
    seeds = {r["seed"] for r in stored["rows"]}
    assert seeds == set(config["seeds"])


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(
            p,
            marks=pytest.mark.xfail(strict=True, reason=DIVERGED[p.parent.name])
            if p.parent.name in DIVERGED
            else (),
        )
        for p in RESULTS
    ],
    ids=lambda p: p.parent.name,
)
def test_every_committed_result_replays_its_first_rows(path):
    """Replay the first 600 rows of the first recorded data set, seed 0:
    every learner's mistakes at every recorded round up to 600 are the
    recorded ones (``skbandit rerun --n-samples 600 --seeds 1 --verify``)."""
    stored = json.loads(path.read_text())
    names = {r["name"] for r in stored["rows"]}
    if "vw" in names and not vw_available():
        pytest.skip("vowpalwabbit is not installed")
    dataset = stored["config"]["datasets"][0]
    data_dir = shared_data_file("usps.npz").parent
    result = rerun(
        path, prefix=600, n_seeds=1, datasets=[dataset], verify=True, data_dir=data_dir
    )
    assert result.rows and not result.skipped
    assert len(result.rows) == sum(
        1
        for r in stored["rows"]
        if r["dataset"] == dataset and r["seed"] == stored["config"]["seeds"][0]
    )


def test_rerun_verify_reports_a_changed_row(tmp_path, capsys):
    config = (
        EXPERIMENTS["compare"]
        .with_(
            learners=(
                LearnerSpec("Banditron", grid={"exploration__epsilon": [0.05, 0.2]}),
            )
        )
        .config(n_seeds=1, n_samples=500)
    )
    result = run_config(config)
    result.write(tmp_path, plots=False)
    path = tmp_path / "results.json"
    argv = ["rerun", str(path), "--verify", "--no-plots", "--out", str(tmp_path / "r")]
    assert main(argv) == 0
    assert "verified: 2 replayed rows match" in capsys.readouterr().out
    assert main([*argv, "--n-samples", "200"]) == 0  # a prefix of the rows
    stored = json.loads(path.read_text())
    stored["rows"][1]["curve_mistakes"][-1] += 1
    path.write_text(json.dumps(stored))
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "1 of 2 replayed rows differ" in err and "at round 500" in err
    assert verify_rows(stored["rows"], result.rows)[0].startswith("Banditron on synsep")


def test_recorded_gamma_rows_load_and_replay_under_todays_names():
    """A run recorded with the grid key ``gamma`` loads with today's
    ``exploration__epsilon`` and reproduces its rows."""
    config = (
        EXPERIMENTS["compare"]
        .with_(
            learners=(LearnerSpec("Banditron", grid={"exploration__epsilon": [0.1]}),)
        )
        .config(n_seeds=1, n_samples=300)
    )
    rows = run_config(config).rows
    old = json.loads(json.dumps({"config": config, "rows": rows}))
    old["config"]["learners"][0]["grid"] = {"gamma": [0.1]}
    for row in old["rows"]:
        row["params"] = row["grid_params"] = {"gamma": 0.1}
    new, notes = upgrade_config(old["config"])
    assert new["learners"][0]["grid"] == {"exploration__epsilon": [0.1]}
    assert notes == [
        "Banditron: recorded parameter 'gamma' is 'exploration__epsilon' today"
    ]
    assert verify_rows(old["rows"], run_config(replay_config(old)).rows) == []


def test_docs_tables_are_the_committed_runs():
    """docs/experiments.md's tables of recorded runs are rendered from their
    results.json (``python -m skbandit.experiments._doctables
    docs/experiments.md``), not typed by hand."""
    page = ROOT / "docs" / "experiments.md"
    text = page.read_text()
    tables = list(_MARKED.finditer(text))
    assert len(tables) >= 7
    assert render_tables(text, ROOT) == text
    body = tables[0].start("body")
    tampered = text[:body] + text[body:].replace("0.0", "0.1", 1)
    assert render_tables(tampered, ROOT) != tampered
    for table in tables:
        path = ROOT / table["path"]
        assert ExperimentResult.load(path).rows
