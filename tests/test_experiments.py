"""Experiments as data, the runner's files, re-runs and the ``skbandit`` command."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import shared_data_file

import skbandit
from skbandit.experiments import (
    EXPERIMENTS,
    get_experiment,
    list_experiments,
    load_dataset,
    rerun,
    run_config,
    run_experiment,
)
from skbandit.experiments._cli import main
from skbandit.experiments._data import DatasetUnavailable
from skbandit.experiments._learners import LearnerUnavailable
from skbandit.experiments._specs import LearnerSpec

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _data_dir() -> Path:
    return shared_data_file("usps.npz").parent


def _numbers(rows):
    """What must re-run identically: everything but timings."""
    return sorted(
        (
            r["dataset"],
            r["learner"],
            json.dumps(r["params"], sort_keys=True),
            r["seed"],
            r["rounds"],
            r["mistakes"],
            r["greedy_mistakes"],
            tuple(r["curve_rounds"]),
            tuple(r["curve_mistakes"]),
            tuple(r["curve_greedy_mistakes"]),
        )
        for r in rows
    )


def _check_files(out: Path, result) -> None:
    with open(out / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(result.rows) > 0
    for row in rows:
        assert 0.0 <= float(row["error"]) <= 1.0
        assert int(row["rounds"]) > 0
    with open(out / "summary.csv", newline="") as f:
        assert len(list(csv.DictReader(f))) == len(result.summary())
    with open(out / "curves.csv", newline="") as f:
        assert next(csv.reader(f))[:5] == [
            "dataset",
            "learner",
            "params",
            "seed",
            "round",
        ]
    stored = json.loads((out / "results.json").read_text())
    assert set(stored) >= {"config", "versions", "rows", "skipped", "summary"}
    assert stored["config"]["seeds"] == sorted({r["seed"] for r in result.rows})
    for dist in ("numpy", "scipy", "scikit-learn", "skbandit", "python"):
        assert dist in stored["versions"]
    pngs = sorted(out.glob("*.png"))
    assert pngs, "no plot written"
    for png in pngs:
        data = png.read_bytes()
        assert data[:8] == PNG_MAGIC and len(data) > 2000


def test_registry_names_and_configs_are_json():
    assert list_experiments() == [
        "beygelzimer2019",
        "chen2009-table1",
        "compare",
        "soba2017-fig2",
        "vw-cbify",
    ]
    for name, spec in EXPERIMENTS.items():
        for quick in (False, True):
            config = json.loads(json.dumps(spec.config(quick=quick)))
            assert config["experiment"] == name
            assert config["seeds"] and config["learners"] and config["datasets"]
    soba = get_experiment("soba2017-fig2").config()
    assert soba["n_samples"] == 10**6 and len(soba["seeds"]) == 10
    rates = soba["learners"][0]["grid"]["exploration__epsilon"]
    assert rates[0] == 2.0**-16 and rates[-1] == 2.0**-1 and len(rates) == 16
    with pytest.raises(KeyError, match="soba2017-fig2"):
        get_experiment("no-such-experiment")


def test_compare_baselines_are_scikit_learn_full_information():
    names = [lrn.name for lrn in get_experiment("compare").learners]
    for baseline in ("Perceptron", "SGD-hinge", "SGD-log", "PA-I"):
        assert f"sklearn:{baseline}" in names


def _tiny(learners, datasets=("synsep",), n=600, seeds=(0, 1)):
    return {
        "experiment": "test",
        "quick": True,
        "datasets": list(datasets),
        "n_samples": n,
        "seeds": list(seeds),
        "learners": [lrn.to_dict() for lrn in learners],
        "plots": ["epsilon", "curve", "mistakes"],
        "chunk_size": 128,
        "minibatch_size": 50,
        "n_checkpoints": 10,
        "table": "best",
    }


def test_missing_learner_stops_the_run_unless_skipped():
    config = _tiny([LearnerSpec("NoSuchLearner"), LearnerSpec("Banditron")])
    with pytest.raises(LearnerUnavailable, match="'NoSuchLearner' on synsep"):
        run_config(config)
    messages = []
    result = run_config(config, echo=messages.append, skip_unavailable=True)
    assert any("NoSuchLearner" in m and "skipped" in m for m in result.skipped)
    assert any("NoSuchLearner" in m for m in messages)
    assert {r["learner"] for r in result.rows} == {"Banditron"}


def test_learners_are_looked_up_by_name_at_run_time(monkeypatch):
    config = _tiny(
        [LearnerSpec("LateLearner", grid={"exploration__epsilon": [0.1, 0.3]})]
    )
    with pytest.raises(LearnerUnavailable, match="no learner named 'LateLearner'"):
        run_config(config)
    monkeypatch.setattr(skbandit, "LateLearner", skbandit.Banditron, raising=False)
    result = run_config(config)
    assert len(result.rows) == 4
    assert {r["params"]["exploration__epsilon"] for r in result.rows} == {0.1, 0.3}


def test_refused_parameters_stop_the_run_naming_learner_and_parameter():
    """The chen2009-table1 defect: OffsetTree refused exploration=0.1 and the
    run went on without it; now nothing runs and the message names the
    learner, the data set, the parameter and the reason."""
    config = _tiny(
        [
            LearnerSpec("Banditron"),
            LearnerSpec(
                "OffsetTree", label="Offset Tree PA", params={"exploration": 0.1}
            ),
        ]
    )
    with pytest.raises(LearnerUnavailable) as exc:
        run_config(config)
    message = str(exc.value)
    for part in ("'Offset Tree PA' on synsep", "'exploration'", "skip_unavailable"):
        assert part in message
    result = run_config(config, skip_unavailable=True)
    assert {r["learner"] for r in result.rows} == {"Banditron"}
    assert "not accepted" in result.skipped[0] and "skipped" in result.skipped[0]


def test_vw_rows_skipped_without_vowpalwabbit(monkeypatch):
    monkeypatch.setitem(sys.modules, "vowpalwabbit", None)
    config = _tiny([LearnerSpec("vw"), LearnerSpec("Banditron")])
    with pytest.raises(LearnerUnavailable, match="pip install vowpalwabbit"):
        run_config(config)
    result = run_config(config, skip_unavailable=True)
    assert any("vowpalwabbit" in m for m in result.skipped)
    assert {r["learner"] for r in result.rows} == {"Banditron"}


def test_vw_rows_when_installed():
    pytest.importorskip("vowpalwabbit")
    result = run_config(
        _tiny([LearnerSpec("vw", grid={"args": ["--cbify {k} --epsilon 0.05"]})])
    )
    assert len(result.rows) == 2
    assert all(0 < r["error"] < 1 and r["greedy_error"] is None for r in result.rows)


_VW_CONFIGS = (
    "--cbify {k} --epsilon 0.05",
    "--cbify {k} --cb_explore_adf --squarecb",
    "--cbify {k} --bag 5",
)


def _one_hot_stream(n=3000, k=5, seed=0):
    """Feature j is on exactly when the label is class j: separable by the identity."""
    y = np.random.default_rng(seed).integers(k, size=n)
    return np.eye(k)[y], y


@pytest.mark.parametrize("args", _VW_CONFIGS)
def test_vw_learns_a_one_hot_stream(args):
    # Feature j lights up exactly for class j, so every cbify configuration
    # must reach about its exploration floor (epsilon 0.05: 0.04). Catches VW
    # lines whose feature names are the bare column indices: VW does not hash
    # integer names, and consecutive indices then share weights across the
    # actions of the cb reductions (measured: 0.25-0.66 error here).
    pytest.importorskip("vowpalwabbit")
    from skbandit.experiments._learners import VWLearner

    X, y = _one_hot_stream()
    curve = VWLearner(args, seed=0).run(X, y, np.arange(5), [len(y)])
    assert curve["mistakes"][-1] / len(y) < 0.1


def test_vw_error_is_the_played_actions_mistakes():
    # The harness reads VW's cumulative loss; with cbify's default costs
    # (0 right, 1 wrong) it must equal the mistakes of the action VW played,
    # counted from each example's prediction.
    pytest.importorskip("vowpalwabbit")
    from vowpalwabbit import Workspace

    from skbandit.experiments._learners import VWLearner, _vw_line

    X, y = load_dataset("synsep", n_samples=2000)
    X = X.toarray() if hasattr(X, "toarray") else X
    classes = np.unique(y)
    for args in (
        "--cbify {k} --epsilon 0.05",
        "--cbify {k} --cb_explore_adf --squarecb",
    ):
        curve = VWLearner(args, seed=0).run(X, y, classes, [500, len(y)])
        ws = Workspace(args.format(k=len(classes)) + " --quiet --random_seed 0")
        played = []
        for xi, code in zip(X, np.searchsorted(classes, y) + 1, strict=True):
            nz = np.flatnonzero(xi)
            ex = ws.parse(_vw_line(int(code), nz.tolist(), xi[nz].tolist()))
            ws.learn(ex)
            played.append(ex.get_prediction())
            ws.finish_example(ex)
        ws.finish()
        wrong = np.asarray(played) != np.searchsorted(classes, y) + 1
        assert curve["mistakes"] == [int(wrong[:500].sum()), int(wrong.sum())]


def test_missing_local_copy_is_skipped():
    result = run_config(
        _tiny([LearnerSpec("Banditron")], datasets=("reuters4", "synsep")),
        data_dir=_data_dir(),
    )
    assert any("reuters4" in m and "no local copy" in m for m in result.skipped)
    assert {r["dataset"] for r in result.rows} == {"synsep"}


def test_real_data_sets_from_the_offline_copies():
    data_dir = _data_dir()
    for name, n_classes in [
        ("usps", 10),
        ("mnist", 10),
        ("covtype", 7),
        ("20newsgroups", 20),
    ]:
        X, y = load_dataset(name, 500, data_dir=data_dir)
        assert X.shape[0] == len(y) == 500
        assert len(np.unique(y)) <= n_classes
        assert np.isfinite(X.sum())
    with pytest.raises(KeyError, match="choose from"):
        load_dataset("no-such-data")


def test_run_writes_files_and_json_reruns_to_the_same_numbers(tmp_path):
    learners = [
        LearnerSpec("Banditron", grid={"exploration__epsilon": [2.0**-4, 2.0**-2]}),
        LearnerSpec("MulticlassPerceptron", label="Perceptron"),
        LearnerSpec("sklearn:Perceptron"),
        LearnerSpec("sklearn:PA-I"),
    ]
    config = _tiny(learners)
    result = run_config(config)
    result.write(tmp_path)
    _check_files(tmp_path, result)
    names = {p.name for p in tmp_path.glob("*.png")}
    assert names == {
        "epsilon_synsep.png",
        "error_vs_rounds_synsep.png",
        "mistakes_synsep.png",
    }
    again = rerun(tmp_path / "results.json")
    assert _numbers(again.rows) == _numbers(result.rows)
    best = {r["learner"]: r for r in result.best()}
    assert set(best) == {
        "Banditron",
        "Perceptron",
        "sklearn:Perceptron",
        "sklearn:PA-I",
    }
    assert "error ± std" in result.table()


def test_threading_backend_gives_the_same_numbers():
    config = _tiny(
        [LearnerSpec("Banditron", grid={"exploration__epsilon": [0.05, 0.2]})]
    )
    serial = run_config(config, n_jobs=1)
    threaded = run_config(config, n_jobs=2, backend="threading")
    assert _numbers(serial.rows) == _numbers(threaded.rows)


def test_quick_experiment_in_the_default_suite(tmp_path):
    """beygelzimer2019 --quick takes seconds: run it by default."""
    result = run_experiment(
        "beygelzimer2019", quick=True, n_jobs=2, out=tmp_path, data_dir=_data_dir()
    )
    assert result.config["quick"] and result.rows
    _check_files(tmp_path, result)
    assert (tmp_path / "mistakes_separable-strong.png").is_file()
    again = rerun(tmp_path / "results.json", n_jobs=1)
    assert _numbers(again.rows) == _numbers(result.rows)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_every_experiment_runs_quick(name, tmp_path, capsys):
    """Each registered experiment, as ``skbandit run NAME --quick``."""
    code = main(
        [
            "run",
            name,
            "--quick",
            "--n-jobs",
            "2",
            "--out",
            str(tmp_path),
            "--data-dir",
            str(_data_dir()),
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "error ± std" in out and "results.json" in out
    stored = json.loads((tmp_path / "results.json").read_text())
    assert stored["config"]["quick"] is True
    assert len(stored["rows"]) == len(
        list(csv.DictReader(open(tmp_path / "results.csv")))
    )
    assert all(p.stat().st_size > 2000 for p in tmp_path.glob("*.png"))
    again = rerun(tmp_path / "results.json", n_jobs=2)
    again.write(tmp_path / "again")
    _check_files(tmp_path / "again", again)
    assert _numbers(again.rows) == _numbers(stored["rows"])


# ----------------------------------------------------------------------- CLI
@pytest.mark.parametrize(
    "argv", [["--help"], ["run", "--help"], ["compare", "--help"], ["list", "--help"]]
)
def test_cli_help(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 0
    assert "usage: skbandit" in capsys.readouterr().out


def test_cli_list(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in list_experiments():
        assert name in out
    assert "synsep" in out


def test_cli_no_command_is_an_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code != 0
    assert "usage" in capsys.readouterr().err


def test_cli_bad_experiment_name(capsys):
    assert main(["run", "no-such-experiment", "--quick"]) != 0
    err = capsys.readouterr().err
    assert "unknown experiment 'no-such-experiment'" in err
    assert "soba2017-fig2" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "argv",
    [
        ["compare", "--datasets", "no-such-data"],
        ["run", "compare", "--datasets", "no-such-data"],
    ],
)
def test_cli_bad_dataset_name(argv, capsys):
    assert main(argv) != 0
    err = capsys.readouterr().err
    assert "unknown data set 'no-such-data'" in err and "synsep" in err


def test_cli_missing_extra(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code = main(["run", "compare", "--quick", "--out", str(tmp_path)])
    assert code != 0
    err = capsys.readouterr().err
    assert 'pip install "skbandit[experiments]"' in err and err.count("\n") == 1
    assert not any(tmp_path.iterdir())


def test_cli_bad_grid_and_bad_json(capsys, tmp_path):
    assert main(["compare", "--grid", "exploration__epsilon"]) != 0
    assert "PARAM=V1,V2" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert main(["rerun", str(bad)]) != 0
    assert "not a results.json" in capsys.readouterr().err


def test_cli_compare_runs(tmp_path, capsys):
    argv = [
        "compare",
        "--datasets",
        "synsep",
        "synnonsep",
        "--learners",
        "Banditron",
        "MulticlassPerceptron",
        "NotYetWritten",
        "--grid",
        "exploration__epsilon=0.05,0.2",
        "--seeds",
        "1",
        "--n-samples",
        "800",
        "--n-jobs",
        "1",
        "--out",
        str(tmp_path),
    ]
    code = main(argv)
    assert code == 1  # a learner that cannot run: an error, nothing written
    captured = capsys.readouterr()
    assert "NotYetWritten" in captured.err and "--skip-unavailable" in captured.err
    assert not (tmp_path / "results.json").exists()
    code = main([*argv, "--skip-unavailable"])
    assert code == 0
    captured = capsys.readouterr()
    assert "NotYetWritten" in captured.err and "skipped" in captured.err
    for name in ("Banditron", "sklearn:SGD-log", "sklearn:PA-I"):
        assert name in captured.out
    stored = json.loads((tmp_path / "results.json").read_text())
    assert {r["dataset"] for r in stored["rows"]} == {"synsep", "synnonsep"}
    assert (tmp_path / "epsilon_synnonsep.png").is_file()


# ------------------------------------------------- missing data, repr, files
def test_cli_missing_data_names_the_cli_flags_and_writes_nothing(
    tmp_path, capsys, monkeypatch
):
    # An empty download cache (the loaders read SCIKIT_LEARN_DATA).
    monkeypatch.setenv("SCIKIT_LEARN_DATA", str(tmp_path / "cache"))
    out = tmp_path / "out"
    argv = ["run", "chen2009-table1", "--quick", "--no-plots", "--out", str(out)]
    assert main([*argv, "--no-download"]) == 1
    err = capsys.readouterr().err
    assert "--data-dir DIR" in err and "drop --no-download" in err
    assert "usps.npz" in err and "mini_newsgroups.tsv.gz" in err
    # The loaders' Python keywords are not the command's.
    assert "download_if_missing" not in err and "path=" not in err
    assert not out.exists()

    empty = tmp_path / "empty"
    empty.mkdir()
    assert main([*argv, "--data-dir", str(empty)]) == 1
    err = capsys.readouterr().err
    assert f"no local copy in {empty}" in err and "another folder" in err
    assert "--no-download" not in err.splitlines()[-1]
    assert not out.exists()


def test_python_api_missing_data_names_its_own_arguments(tmp_path, monkeypatch):
    monkeypatch.setenv("SCIKIT_LEARN_DATA", str(tmp_path / "cache"))
    out = tmp_path / "out"
    with pytest.raises(DatasetUnavailable, match="data_dir=DIR") as exc:
        run_experiment("chen2009-table1", quick=True, download=False, out=out)
    assert "download=True" in str(exc.value)
    assert exc.value.datasets == ("usps", "mnist", "20newsgroups")
    assert not out.exists()


def test_a_result_without_rows_writes_nothing(tmp_path):
    result = run_config(_tiny([LearnerSpec("NoSuchLearner")]), skip_unavailable=True)
    assert result.rows == []
    with pytest.raises(ValueError, match="nothing to write"):
        result.write(tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert (
        main(
            [
                "compare",
                "--learners",
                "NoSuchLearner",
                "--no-baselines",
                "--n-samples",
                "200",
                "--out",
                str(tmp_path / "cli"),
                "--skip-unavailable",
            ]
        )
        == 1
    )
    assert not (tmp_path / "cli").exists()


def test_default_output_folder_is_ignored_by_git():
    root = Path(__file__).resolve().parents[1]
    ignored = (root / ".gitignore").read_text().splitlines()
    assert "/skbandit-results/" in ignored


def test_repr_is_short_and_print_shows_the_table():
    learners = [LearnerSpec("Banditron", grid={"exploration__epsilon": [0.05, 0.2]})]
    result = run_config(_tiny(learners, datasets=("synsep", "synnonsep"), n=2000))
    text = repr(result)
    assert text == (
        "ExperimentResult(experiment='test', quick=True, runs=8, "
        "datasets=['synsep', 'synnonsep'], learners=['Banditron'], "
        f"skipped=0, seconds={result.seconds:.1f})"
    )
    # The rows (and their curves) are not in the repr: it does not grow with them.
    assert "curve" not in text and len(text) < 200
    assert result.table() in str(result)


# --------------------------------------------------------------------- plots
def _legend_styles(ax):
    handles, labels = ax.get_legend_handles_labels()
    styles = []
    for handle in handles:
        # errorbar() gives a container (a tuple) whose first item is the line
        line = handle[0] if isinstance(handle, tuple) else handle
        styles.append((line.get_color(), line.get_linestyle(), line.get_marker()))
    return labels, styles


def test_every_series_has_its_own_style_and_titles_say_what_is_drawn():
    pytest.importorskip("matplotlib")
    from skbandit.experiments._plot import _figures

    # 13 series without a grid (fixed settings) and one tuned over a epsilon grid.
    learners = [
        LearnerSpec(
            "Banditron", label=f"Banditron g={g}", params={"exploration__epsilon": g}
        )
        for g in np.linspace(0.05, 0.65, 13)
    ] + [
        LearnerSpec(
            "Banditron", label="tuned", grid={"exploration__epsilon": [0.05, 0.2]}
        )
    ]
    config = _tiny(learners, n=200, seeds=(0,))
    result = run_config(config)
    figures = dict(_figures(result))
    assert set(figures) == {
        "epsilon_synsep.png",
        "error_vs_rounds_synsep.png",
        "mistakes_synsep.png",
    }
    for name, fig in figures.items():
        (ax,) = fig.axes
        labels, styles = _legend_styles(ax)
        assert len(labels) == 14, name
        assert len(set(styles)) == len(styles), (name, styles)
        title = ax.get_title()
        assert "best parameters" not in title
        if name != "epsilon_synsep.png":
            assert "lowest-error setting" in title and "fixed settings" in title


def test_series_styles_are_distinct_and_learning_curves_use_them():
    plt = pytest.importorskip("matplotlib.pyplot")
    from skbandit.evaluation import plot_learning_curves
    from skbandit.evaluation._plot import series_styles

    styles = [tuple(s.values()) for s in series_styles(320)]
    assert len(set(styles)) == 320
    # Ten colours: the first 40 series differ by (colour, line style) already.
    assert len({s[:2] for s in styles[:40]}) == 40

    class Curve:
        def __init__(self, i):
            self.name = f"learner {i}"
            self.rounds = np.array([10, 100, 1000])
            self.mistakes = np.array([5, 40, 300]) + i

    fig, ax = plt.subplots()
    try:
        plot_learning_curves([Curve(i) for i in range(12)], ax=ax)
        labels, drawn = _legend_styles(ax)
        assert len(labels) == 12 and len(set(drawn)) == 12
    finally:
        plt.close(fig)


# ------------------------------------------------------------- preprocessing
def test_preprocess_choices_dense_and_sparse():
    import scipy.sparse as sp

    from skbandit.experiments._data import preprocess

    rng = np.random.default_rng(0)
    X = rng.uniform(-2.0, 3.0, size=(30, 7))
    X[4] = 0.0
    before = X.copy()
    assert preprocess(X, "stored") is X
    unit = preprocess(X, "unit-norm")
    norms = np.sqrt((unit**2).sum(axis=1))
    assert np.allclose(np.delete(norms, 4), 1.0) and norms[4] == 0.0
    assert np.allclose(unit[1] * np.sqrt((X[1] ** 2).sum()), X[1])
    scaled = preprocess(X, "unit-range")
    assert scaled.min() == 0.0 and scaled.max() == 1.0
    assert np.allclose(scaled * (X.max() - X.min()) + X.min(), X)
    assert np.array_equal(X, before)  # the input is not modified

    S = sp.csr_matrix(np.abs(X))
    data = S.data.copy()
    assert np.allclose(
        preprocess(S, "unit-norm").toarray(), preprocess(np.abs(X), "unit-norm")
    )
    assert np.allclose(
        preprocess(S, "unit-range").toarray(), np.abs(X) / np.abs(X).max()
    )
    assert np.array_equal(S.data, data)
    with pytest.raises(ValueError, match="unit-norm"):
        preprocess(X, "l2")


def test_preprocessing_in_the_config_and_the_run(monkeypatch):
    import skbandit.experiments._runner as runner
    from skbandit.experiments._data import preprocess

    spec = get_experiment("chen2009-table1")
    config = spec.config()
    assert config["preprocessing"] == dict(spec.preprocessing)
    assert set(config["preprocessing"]) == set(config["datasets"])
    mine = spec.config(preprocessing={"mnist": "unit-norm"})
    assert mine["preprocessing"]["mnist"] == "unit-norm"
    assert {k: v for k, v in mine["preprocessing"].items() if k != "mnist"} == {
        k: v for k, v in config["preprocessing"].items() if k != "mnist"
    }
    with pytest.raises(ValueError, match="preprocessing of 'reuters4'"):
        spec.config(preprocessing="l2")

    seen = []
    run_task = runner._run_task

    def spy(X, y, classes, task):
        seen.append(X)
        return run_task(X, y, classes, task)

    monkeypatch.setattr(runner, "_run_task", spy)
    config = _tiny([LearnerSpec("MulticlassPerceptron")], seeds=(0,))
    config["preprocessing"] = {"synsep": "unit-norm"}
    result = run_config(config, n_jobs=1)
    X, _ = load_dataset("synsep", 600)
    assert np.allclose(seen[0].toarray(), preprocess(X, "unit-norm").toarray())
    assert result.config["preprocessing"] == {"synsep": "unit-norm"}


def test_cli_preprocessing_flag(tmp_path, capsys):
    argv = ["compare", "--n-samples", "300", "--seeds", "1", "--no-plots"]
    argv += ["--learners", "MulticlassPerceptron", "--no-baselines"]
    assert (
        main([*argv, "--preprocessing", "synsep=unit-norm", "--out", str(tmp_path)])
        == 0
    )
    assert "synsep: unit-norm" in capsys.readouterr().err
    stored = json.loads((tmp_path / "results.json").read_text())
    assert stored["config"]["preprocessing"] == {"synsep": "unit-norm"}
    assert main([*argv, "--preprocessing", "cosine"]) == 2
    assert (
        "'cosine' is not one of stored, unit-range, unit-norm"
        in capsys.readouterr().err
    )
    assert main([*argv, "--preprocessing", "nodata=stored"]) == 2
    assert "unknown data set 'nodata'" in capsys.readouterr().err
