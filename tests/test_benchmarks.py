"""The benchmark scripts still run end to end (no timing is asserted here)."""

from __future__ import annotations

import json
import re
import shutil
import sys

import pytest
from _helpers import BENCHMARKS, run_benchmark


def test_bench_core_smoke_run(tmp_path):
    out = run_benchmark(
        "bench_core.py",
        "--n-rounds", "2000", "--repeat", "1", "--json", str(tmp_path / "r.json"),
    )  # fmt: skip
    for learner in ("Banditron", "MulticlassPerceptron"):
        for how in ("1 call", "1000-row chunks"):
            row = f"skbandit {learner} partial_fit ({how})"
            assert out.stdout.count(row) == 3, row  # dense, dense-full and csr
    assert out.stdout.count("sklearn Perceptron.partial_fit") == 3
    assert "NumPy per-row Banditron loop" in out.stdout
    assert "VW --cbify" in out.stdout  # measured, or "not installed"
    assert "FAILED" not in out.stdout
    assert (tmp_path / "r.json").is_file()


def test_bench_core_help_mentions_full():
    out = run_benchmark("bench_core.py", "--help")
    assert "--full" in out.stdout
    text = " ".join(out.stdout.split())  # argparse wraps to the terminal width
    assert "default: 200000, or 1000000 with --full" in text


def _harness():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import _harness
    finally:
        sys.path.remove(str(BENCHMARKS))
    return _harness


def test_stream_dense_equals_csr_and_prefixes_agree():
    h = _harness()
    X_csr, y = h.make_stream(300, seed=1, block=128)
    X_dense, y_dense = h.make_stream(300, seed=1, dense=True, block=128)
    X_short, y_short = h.make_stream(200, seed=1, block=128)
    assert X_csr.shape == X_dense.shape == (300, h.N_FEATURES)
    assert X_csr.has_sorted_indices
    assert (X_csr.toarray() == X_dense).all() and (y == y_dense).all()
    assert (X_csr[:200] != X_short).nnz == 0 and (y[:200] == y_short).all()
    nnz = X_csr.getnnz(axis=1)
    assert nnz.min() >= 20 and X_csr[:, h.N_RARE :].getnnz(axis=1).max() == 20


class _Broken:
    def __init__(self, seed):
        pass

    def partial_fit(self, X, y, classes=None):
        raise RuntimeError("broken on purpose")


def test_failing_learner_gets_a_failed_row(capsys):
    h = _harness()
    learners = [("Broken", _Broken)]
    for isolate in ([], ["--no-isolate"]):
        argv = ["--n-rounds", "300", "--repeat", "1", "--inputs", "csr", *isolate]
        assert h.main(learners, argv) == 1
        out = capsys.readouterr().out
        assert out.count("FAILED RuntimeError: broken on purpose") == 2
        assert "FAILED" not in out.split("sklearn Perceptron")[1].split("\n")[0]


def test_bench_journal_smoke_run():
    """bench_journal.py runs every learner with and without the journal and
    finds the same final state (no timing is asserted)."""
    out = run_benchmark(
        "bench_journal.py",
        "--rounds", "300", "--full-rounds", "50", "--repeat", "1",
        cwd=BENCHMARKS,
    )  # fmt: skip
    assert "DIFFERENT" not in out.stdout
    for name in ("Banditron", "SOBA full", "PNewtron", "OnlineSelector"):
        assert out.stdout.count(f"\n{name} ") == 2, name  # csr and dense


# under valgrind: about 30 s, so only with --runslow
@pytest.mark.slow
@pytest.mark.skipif(
    shutil.which("valgrind") is None or shutil.which("cc") is None,
    reason="count_instructions.py needs valgrind and a C compiler",
)
def test_count_instructions_counts_only_the_measured_calls(tmp_path):
    """The callgrind regions hold the calls: a 1-row call costs instructions,
    a 40-row call more, the empty region only the helper's own calls (about
    3,000). A helper that did not toggle collection would report zeros; one
    that never stopped collecting would count the 40-row call in every region."""
    out = run_benchmark(
        "count_instructions.py", "--learners", "Banditron", "--inputs", "csr",
        "--rounds", "40", "--warmup", "10", "--json", str(tmp_path / "r.json"),
    )  # fmt: skip
    assert "Banditron" in out.stdout
    (row,) = json.loads((tmp_path / "r.json").read_text())["rows"]
    assert row["rounds"] == 40 and row["input"] == "csr"
    assert 0 <= row["ir_noop"] < 10_000  # the ctypes calls around the region
    assert 0 < row["ir_1_row"] < row["ir_n_rows"]
    assert row["marginal"] > 0
    assert row["ir_per_round"] == row["ir_n_rows"] / 40


# under valgrind, with VW: about a minute, so only with --runslow
@pytest.mark.slow
@pytest.mark.skipif(
    shutil.which("valgrind") is None or shutil.which("cc") is None,
    reason="count_instructions.py needs valgrind and a C compiler",
)
def test_count_instructions_counts_session_rounds_and_vw(tmp_path):
    """--session counts rounds of a LiveSession, which execute fewer
    instructions than the live loop's public calls on the same rows (a flag
    ignored would count the loop twice); --vw adds VW's predict + learn."""
    pytest.importorskip("vowpalwabbit")
    ir = {}
    for mode in ("--live", "--session"):
        out = tmp_path / f"{mode[2:]}.json"
        run_benchmark(
            "count_instructions.py", mode, "--script", "bench_live.py",
            "--learners", "Banditron", "--inputs", "csr", "--rounds", "40",
            "--warmup", "10", "--json", str(out),
            *(["--vw"] if mode == "--session" else []),
        )  # fmt: skip
        for row in json.loads(out.read_text())["rows"]:
            ir[mode, row["learner"]] = row["ir_per_round"]
    assert 0 < ir["--session", "Banditron"] < ir["--live", "Banditron"]
    assert ir["--session", "VW"] > 0


def test_defaults_fingerprint_covers_every_public_learner():
    """The fingerprint that checks refactorings bit for bit (two versions'
    outputs compared) has a line per public learner and input, each path
    digested; a learner it skipped would go unchecked."""
    from _registry import public_estimator_classes

    # 100 rounds: every learner plays, learns and ties on both inputs (the
    # script's per-learner work, RegressionReduction's above all, is the time)
    out = run_benchmark("defaults_fingerprint.py", "--n-rounds", "100")
    lines = out.stdout.splitlines()
    for cls in public_estimator_classes():
        for kind in ("dense", "csr"):
            row = [line for line in lines if line.split()[:2] == [cls.__name__, kind]]
            assert len(row) == 1, (cls.__name__, kind)
            for field in ("plays", "state", "scores", "logged", "fit"):
                assert f" {field} " in row[0]
    # a dense row and its CSR twin play and learn the same (but for a learner
    # that hands the rows as given to a user's model, which may round its
    # sparse and dense paths apart: RegressionReduction)
    for cls in public_estimator_classes():
        if not getattr(cls, "_dense_csr_alike", True):
            continue
        dense, csr = (
            next(line for line in lines if line.split()[:2] == [cls.__name__, kind])
            for kind in ("dense", "csr")
        )
        assert dense.split()[2:6] == csr.split()[2:6], cls.__name__


def test_features_study_measures_the_quadratic_expansion(tmp_path):
    """The script's 'quadratic' column is SquareCB on the degree-2 expansion of
    the stream's rows (caught: the raw rows passed twice, a wrong seed)."""
    import numpy as np
    from sklearn.preprocessing import PolynomialFeatures

    from skbandit import SquareCB

    out = tmp_path / "f.json"
    res = run_benchmark(
        "features_study.py", "--suite", "tuning", "--streams", "raw-k2",
        "--seeds", "1", "--out", str(out),
    )  # fmt: skip
    assert "| raw-k2 | 8 -> 44 | SquareCB() |" in res.stdout
    row = json.loads(out.read_text())["raw-k2/1"]
    sys.path.insert(0, str(BENCHMARKS))
    try:
        from streams import load_stream
    finally:
        sys.path.remove(str(BENCHMARKS))
    X, y = load_stream("raw-k2", 1, suite="tuning")
    Xq = PolynomialFeatures(degree=2, include_bias=False).fit_transform(X)
    for name, rows in (("raw", X), ("quadratic", Xq)):
        est = SquareCB(random_state=1).partial_fit(rows, y, classes=np.unique(y))
        assert row[f"SquareCB() {name}"] == est.n_mistakes_ / len(y)
    assert row["SquareCB() raw"] != row["SquareCB() quadratic"]


def test_eval_nonlinear_studies_play_what_they_name(tmp_path):
    """eval_nonlinear.py's --quadratic rows are SquareCB on the degree-2
    monomials of the rows standardised with the statistics of the rows
    before them, its --exploration-study rows the default selector with the
    nonlinear candidate's schedule replaced, and its --learner-study rows the
    learner named on the random features of those rows (caught: raw rows
    expanded, a schedule left at the default or given to another candidate,
    the learner played on the raw rows or on features with another gamma, the
    wide candidate's D not set or set on another candidate)."""
    import numpy as np
    from sklearn.preprocessing import PolynomialFeatures

    from skbandit import OnlineSelector, SquareCB
    from skbandit.exploration import InverseGap
    from skbandit.multiclass._candidates import default_candidates

    run_benchmark(
        "eval_nonlinear.py", "--suite", "tuning", "--streams", "raw-k2",
        "--seeds", "1", "--quadratic", "--exploration-study", "--learner-study",
        "--candidate-components", "64", "--out", str(tmp_path),
    )  # fmt: skip
    row = json.loads((tmp_path / "tuning.json").read_text())["raw-k2/1"]
    sys.path.insert(0, str(BENCHMARKS))
    try:
        from streams import load_stream
    finally:
        sys.path.remove(str(BENCHMARKS))
    X, y = load_stream("raw-k2", 1, suite="tuning")
    classes = np.unique(y)
    U = np.empty_like(X, dtype=float)
    for t in range(len(X)):  # row t by the mean and sd of rows 0 .. t-1
        past = X[:t]
        mean = past.mean(axis=0) if t else np.zeros(X.shape[1])
        sd = past.std(axis=0) if t else np.ones(X.shape[1])
        U[t] = (X[t] - mean) / np.where(sd < 1e-12, 1.0, sd)
    Z = PolynomialFeatures(2, include_bias=False).fit_transform(U)
    est = SquareCB(step_size="normalized", random_state=1).partial_fit(
        Z, y, classes=classes
    )
    assert abs(row["QUAD SquareCB(normalized,0.5)"] - est.n_mistakes_ / len(y)) < 1e-9
    cands = default_candidates(X.shape[1], len(classes))
    for c in cands:
        c.set_params(random_state=0)
    cands[0].set_params(squarecb__exploration=InverseGap(100.0, exponent=0.5))
    sel = OnlineSelector(candidates=cands, random_state=1).partial_fit(
        X, y, classes=classes
    )
    assert row["OnlineSelector(nonlinear IG(100,0.5))"] == sel.n_mistakes_ / len(y)
    assert row["OnlineSelector(nonlinear IG(300,0.75))"] == row["OnlineSelector()"]
    # --candidate-components: the default with D random features in its
    # nonlinear candidate, nothing else changed
    cands = default_candidates(X.shape[1], len(classes))
    for c in cands:
        c.set_params(random_state=0)
    cands[0].set_params(featureunion__rbfsampler__n_components=64)
    sel = OnlineSelector(candidates=cands, random_state=1).partial_fit(
        X, y, classes=classes
    )
    assert row["OnlineSelector(nonlinear D=64)"] == sel.n_mistakes_ / len(y)
    assert row["OnlineSelector(nonlinear D=64)"] != row["OnlineSelector()"]
    # --learner-study: the learner named, at its defaults, on 1,000 random
    # Fourier features (gamma = 1/d) of the same standardised rows
    from sklearn.kernel_approximation import RBFSampler

    from skbandit import ConservativeOneVsAll

    rbf = RBFSampler(gamma=1.0 / X.shape[1], n_components=1000, random_state=1)
    F = rbf.fit(U[:1]).transform(U)
    cova = ConservativeOneVsAll(random_state=1).partial_fit(F, y, classes=classes)
    key = "RFF1000x1.0 ConservativeOneVsAll()"
    assert abs(row[key] - cova.n_mistakes_ / len(y)) < 1e-9


def test_bench_feature_maps_smoke_run(tmp_path):
    out = run_benchmark(
        "bench_feature_maps.py",
        "--n-rounds", "300", "--repeat", "1", "--dims", "8", "--components", "16",
        "--n-error", "300", "--error-components", "16", "--seeds", "1",
        "--json", str(tmp_path / "speed.json"),
    )  # fmt: skip
    assert "[OnlineStandardScaler, RBFSampler, SquareCB()]" in out.stdout
    # --json: the speed rows in the records compare_release.py reads, one
    # per printed row, each with a rate and its learner's online error
    report = json.loads((tmp_path / "speed.json").read_text())["results"]
    assert len(report) == 6 and all(r["status"] == "ok" for r in report)
    assert {r["input"] for r in report} == {"dense d=8"}
    assert len({r["learner"] for r in report}) == 6
    assert all(r["rounds_per_s"] > 0 and 0 <= r["online_error"] <= 1 for r in report)
    assert "OnlineSelector(default_candidates() + [pipeline])" in out.stdout
    assert "digits" in out.stdout and "make_classification" in out.stdout
    # pair_table.py reads such outputs: every speed row, and the best new run
    # over the best old one (here a copy with every rate doubled, and a
    # slower copy among the old runs)
    rates = re.compile(r"^(.+?\s+\d+\s+(?:-|\d+)\s+)([\d,]+)$", re.M)

    def scaled(factor):
        def rate(m):
            return m[1] + f"{int(int(m[2].replace(',', '')) * factor):,}"

        return rates.sub(rate, out.stdout)

    files = {}
    runs = {"old1": out.stdout, "old2": scaled(0.5), "new1": scaled(2)}
    for name, text in runs.items():
        files[name] = tmp_path / f"{name}.txt"
        files[name].write_text(text)
    table = run_benchmark(
        "pair_table.py", "--old", str(files["old1"]), str(files["old2"]),
        "--new", str(files["new1"]),
    ).stdout.splitlines()  # fmt: skip
    n_rows = len(rates.findall(out.stdout))
    assert n_rows == 6 and len(table) == 1 + n_rows
    assert all(line.endswith(" 2.00") for line in table[1:])
    assert "OnlineSelector() (the default)" in table[3]


def test_bench_many_classes_smoke_run(tmp_path):
    """bench_many_classes.py times every learner, fresh and warm, and VW."""
    out = run_benchmark(
        "bench_many_classes.py",
        "--classes", "20", "30", "--rounds", "10", "--markdown",
        "--json", str(tmp_path / "r.json"),
    )  # fmt: skip
    rows = json.loads((tmp_path / "r.json").read_text())["rows"]
    learners = {r["learner"] for r in rows if not r["learner"].startswith("VW")}
    assert {"SquareCB", "Banditron", "OnlineSelector", "OffsetTree"} <= learners
    for name in learners:
        warm = {r["k"] for r in rows if r["learner"] == name and r["state"] == "warm"}
        assert warm == ({20, 30} if name in ("SquareCB", "Banditron") else {20})
    # the warm-up broke the ties of the two learners the table reads as
    # "untied" (a selector or a pipeline may keep ties among classes its
    # nonlinear candidate has not seen), the fresh learners tie somewhere
    assert all(
        r["tied"] == 0.0
        for r in rows
        if r["state"] == "warm" and r["learner"] in ("SquareCB", "Banditron")
    )
    assert any(r["tied"] > 0.0 for r in rows if r["state"] == "fresh")
    assert "VW --cbify 30" in out.stdout
    assert "| `SquareCB` | untied |" in out.stdout


def test_full_info_limit_is_squarecbs_own_oracle():
    """eval_nonlinear.py's full-information regression learner takes, on
    every row and for every class, the step SquareCB(step_size=AdaGrad(0.1))
    takes for its played class: the same rows given to SquareCB as logged
    feedback for every class (propensity 1, reward 1[a = y]) end at the same
    weights (caught: the step not capped, the intercept left out of the cap
    or not learnt, one class's error used for another, the classes' squared
    gradients shared, a row learnt before it is predicted)."""
    import numpy as np

    from skbandit import LoggedFeedback, SquareCB
    from skbandit.optim import AdaGrad

    sys.path.insert(0, str(BENCHMARKS))
    try:
        from eval_nonlinear import full_info_oracle
    finally:
        sys.path.remove(str(BENCHMARKS))
    rng = np.random.default_rng(3)
    n, d, k = 120, 6, 4
    X = rng.normal(size=(n, d)) * rng.uniform(0.1, 3.0, size=d)
    X[7] = 0.0  # an empty row: only the intercept moves
    y = rng.integers(0, k, size=n)
    error, W = full_info_oracle(X, y, np.arange(k))
    actions = np.tile(np.arange(k), n)
    rewards = (actions == np.repeat(y, k)).astype(float)
    est = SquareCB(step_size=AdaGrad(0.1), initial_reward=0.0, random_state=0)
    est.partial_fit(
        np.repeat(X, k, axis=0),
        LoggedFeedback(actions, rewards, np.ones(n * k)),
        classes=np.arange(k),
    )
    np.testing.assert_allclose(W[:, :-1], est.coef_, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(W[:, -1], est.intercept_, rtol=1e-12, atol=1e-15)
    # predicted before it is learnt: the argmax of the weights before row t
    mistakes, V = 0, np.zeros((k, d + 1))
    for t in range(n):
        xt = np.append(X[t], 1.0)
        mistakes += int(np.argmax(V @ xt) != y[t])
        V = full_info_oracle(X[: t + 1], y[: t + 1], np.arange(k))[1]
    assert error == mistakes / n
