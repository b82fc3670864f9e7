"""Assertions shared by the protocol and validation tests.

They compare learners through the state protocol (``_get_state``): every
declared state array, the counters and the generator, so a learner with state
beyond ``coef_`` is compared whole without special cases.
"""

from __future__ import annotations

import contextlib
import copy
import gc
import io
import os
import runpy
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from numpy.testing import assert_array_equal

from skbandit import BanditFeedback

FITTED_ATTRS = ("classes_", "n_features_in_")

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def single_rows(X, form: str) -> list:
    """The rows of X one at a time, as the one-row calls get them: each a
    C-contiguous (1, d) array (``form="dense"``) or a one-row CSR matrix
    (``"csr"``)."""
    if form == "dense":
        return [np.ascontiguousarray(X[i : i + 1]) for i in range(X.shape[0])]
    Xs = sp.csr_matrix(X)
    return [Xs[i : i + 1] for i in range(X.shape[0])]


def _bindings() -> dict[tuple[str, ...], int]:
    """The identity of every attribute of the imported skbandit modules and of
    the classes they define: ``(module, name)`` and ``(module, class, name)``
    keys."""
    out = {}
    for name, module in list(sys.modules.items()):
        if name != "skbandit" and not name.startswith("skbandit."):
            continue
        for key, value in list(vars(module).items()):
            out[name, key] = id(value)
            if isinstance(value, type) and value.__module__ == name:
                for attr, member in list(vars(value).items()):
                    out[name, key, attr] = id(member)
    return out


def run_benchmark(
    script: str, *args: str, cwd: str | Path | None = None
) -> subprocess.CompletedProcess:
    """Run ``benchmarks/<script>`` with ``args`` as ``python <script> args``
    would (the smoke tests: it runs end to end; no timing is asserted) and
    check that it exited cleanly.

    It runs in this interpreter (``runpy``, as ``__main__``, with the
    benchmarks folder first on ``sys.path``, ``sys.argv`` and the working
    directory set, and its output captured), which spares a fresh
    interpreter's imports of NumPy, SciPy, scikit-learn and skbandit (most of
    a smoke run's time). What a forked child prints is not captured (the
    harness's children report their rows through a pipe).
    ``sys.argv``, ``sys.path``, the working directory, ``os.environ``, the
    warning filters, NumPy's error state and the garbage collector's switch
    are restored afterwards; what a script patches in skbandit it must undo
    itself (as ``bench_journal.py`` does): a module attribute or a class
    attribute of skbandit left rebound, or an attribute added to a class of
    skbandit, fails the call (``_bindings``).
    """
    path = BENCHMARKS / script
    argv = [sys.executable, str(path), *args]
    stdout, stderr = io.StringIO(), io.StringIO()
    saved_argv, saved_path, saved_cwd = sys.argv, list(sys.path), os.getcwd()
    saved_environ, gc_enabled = dict(os.environ), gc.isenabled()
    bindings = _bindings()
    code: int | str | None = 0
    try:
        sys.argv = argv[1:]
        sys.path.insert(0, str(BENCHMARKS))
        if cwd is not None:
            os.chdir(cwd)
        with (
            warnings.catch_warnings(),
            np.errstate(),
            contextlib.redirect_stdout(stdout),
            contextlib.redirect_stderr(stderr),
        ):
            try:
                runpy.run_path(str(path), run_name="__main__")
            except SystemExit as exc:
                code = exc.code
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_environ)
        if gc_enabled:
            gc.enable()
    returncode = 0 if code is None else code if isinstance(code, int) else 1
    if isinstance(code, str):
        stderr.write(code + "\n")
    assert returncode == 0, stderr.getvalue()
    after = _bindings()
    classes = {k[:2] for k in bindings if len(k) == 3}
    rebound = sorted(
        ".".join(k)
        for k, v in after.items()
        if k in bindings and bindings[k] != v or len(k) == 3 and k[:2] in classes
        and k not in bindings
    )  # fmt: skip
    assert not rebound, f"{script} left skbandit patched: {rebound}"
    return subprocess.CompletedProcess(
        argv, returncode, stdout.getvalue(), stderr.getvalue()
    )


def assert_benchmark_rows(out: subprocess.CompletedProcess, names) -> None:
    """Each learner in ``names`` has its one-call row and nothing failed."""
    for name in names:
        assert f"skbandit {name} partial_fit (1 call)" in out.stdout, name
    assert "FAILED" not in out.stdout


def snapshot(est) -> dict:
    """Copies of the whole fitted state of a learner (state protocol + classes)."""
    snap = est._get_state()
    for name in FITTED_ATTRS:
        snap[name] = copy.deepcopy(getattr(est, name))
    return snap


def _assert_equal_values(a, b, name: str) -> None:
    if isinstance(b, np.ndarray):
        assert isinstance(a, np.ndarray), name
        assert a.dtype == b.dtype, name
        assert a.shape == b.shape, name
        assert_array_equal(a, b, err_msg=name)
    elif isinstance(b, dict):
        assert isinstance(a, dict) and a.keys() == b.keys(), name
        for key in b:
            _assert_equal_values(a[key], b[key], f"{name}[{key!r}]")
    else:
        assert a == b, f"{name}: {a!r} != {b!r}"


def assert_same_state(est, snap: dict) -> None:
    """``est`` is bitwise in the state ``snap`` (generator included)."""
    now = snapshot(est)
    assert now.keys() == snap.keys()
    for name in snap:
        _assert_equal_values(now[name], snap[name], name)


def assert_same_learner(a, b) -> None:
    """Two learners in the same whole state (bitwise-equal arrays, same generator)."""
    assert_same_state(a, snapshot(b))


def assert_same_next_actions(a, b, X, y) -> None:
    """Copies of ``a`` and ``b`` play the continuation ``(X, y)`` identically."""
    a, b = copy.deepcopy(a), copy.deepcopy(b)
    fb_a, fb_b = BanditFeedback(y), BanditFeedback(y)
    a.partial_fit(X, fb_a)
    b.partial_fit(X, fb_b)
    assert_same_log(fb_a, fb_b)
    assert_same_learner(a, b)


def assert_same_log(fb_a, fb_b) -> None:
    for name in ("rows_", "actions_", "rewards_", "propensities_"):
        assert_array_equal(getattr(fb_a, name), getattr(fb_b, name), err_msg=name)
    assert fb_a.n_rounds_ == fb_b.n_rounds_


def count_state_copies(monkeypatch, cls) -> dict:
    """Count the calls of ``cls._get_state`` in ``["n"]``: the copy mode's
    copy of the state at the start of a block (``_transaction``)."""
    calls = {"n": 0}
    get_state = cls._get_state

    def counting(self):
        calls["n"] += 1
        return get_state(self)

    monkeypatch.setattr(cls, "_get_state", counting)
    return calls
