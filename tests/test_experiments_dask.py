"""Experiments on a Dask cluster: ``--scheduler ADDRESS`` and ``--backend dask``.

A real ``distributed.LocalCluster`` of two single-threaded worker *processes*
on loopback (127.0.0.1 only); the rows must equal the loky backend's row for
row. ``distributed`` is in the ``tests`` extra: missing, these tests skip on a
developer's machine and fail under ``CI=true``.
"""

from __future__ import annotations

import json

import pytest
from conftest import _on_ci
from test_experiments import _numbers, _tiny

from skbandit.experiments import run_config
from skbandit.experiments._cli import main
from skbandit.experiments._specs import LearnerSpec

try:
    import distributed
except ImportError:  # pragma: no cover - depends on the environment
    distributed = None
    if _on_ci():
        raise
    pytestmark = pytest.mark.skip(reason='needs distributed: pip install ".[dask]"')


def _config():
    return _tiny(
        [
            LearnerSpec("Banditron", grid={"exploration__epsilon": [0.05, 0.2]}),
            LearnerSpec("MulticlassPerceptron"),
        ],
        n=400,
    )


@pytest.fixture(scope="module")
def cluster():
    """Two worker processes on 127.0.0.1, closed even when a test fails."""
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
    ) as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        yield cluster


@pytest.fixture(scope="module")
def loky_rows():
    return _numbers(run_config(_config(), n_jobs=2, backend="loky").rows)


def test_scheduler_address_gives_the_loky_rows(cluster, loky_rows):
    result = run_config(_config(), n_jobs=2, scheduler=cluster.scheduler_address)
    assert _numbers(result.rows) == loky_rows
    # run_config's client is closed; the cluster it connected to keeps running.
    with pytest.raises(ValueError):
        distributed.default_client()
    assert cluster.status.name == "running"


def test_cli_scheduler_flag(cluster, loky_rows, tmp_path, capsys):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"config": _config()}))
    code = main(
        [
            "rerun",
            str(config),
            "--scheduler",
            cluster.scheduler_address,
            "--n-jobs",
            "2",
            "--no-plots",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert code == 0
    assert f"scheduler={cluster.scheduler_address}" in capsys.readouterr().err
    stored = json.loads((tmp_path / "out" / "results.json").read_text())
    assert _numbers(stored["rows"]) == loky_rows


def test_scheduler_with_another_backend_is_an_error(capsys):
    with pytest.raises(ValueError, match="needs backend='dask'"):
        run_config(_config(), backend="loky", scheduler="tcp://127.0.0.1:1")
    code = main(
        ["compare", "--backend", "threading", "--scheduler", "tcp://127.0.0.1:1"]
    )
    assert code == 2
    assert "--scheduler" in capsys.readouterr().err


class _Recorder:
    """Wraps ``distributed.LocalCluster`` to keep the clusters it starts and
    the arguments it was asked for; the workers it starts are threads of this
    process (``processes=False``: no interpreter to start per worker), as
    worker processes are exercised by the module's ``cluster``."""

    def __init__(self):
        self.clusters = []

    def __call__(self, *args, **kwargs):
        cluster = _LOCAL_CLUSTER(
            *args, **{**kwargs, "processes": False, "protocol": "tcp"}
        )
        self.clusters.append((cluster, kwargs))
        return cluster


_LOCAL_CLUSTER = distributed.LocalCluster if distributed is not None else None


def test_dask_backend_without_address_starts_and_closes_a_local_cluster(
    loky_rows, monkeypatch
):
    recorder = _Recorder()
    monkeypatch.setattr(distributed, "LocalCluster", recorder)
    result = run_config(_config(), n_jobs=2, backend="dask")
    assert _numbers(result.rows) == loky_rows
    ((cluster, kwargs),) = recorder.clusters
    assert kwargs["n_workers"] == 2 and kwargs["processes"] is True
    assert kwargs["host"] == "127.0.0.1"
    assert cluster.status.name == "closed"
    with pytest.raises(ValueError):
        distributed.default_client()

    # A run that fails half-way closes its cluster too.
    import joblib

    def broken(*args, **kwargs):
        raise RuntimeError("planted failure")

    monkeypatch.setattr(joblib, "Parallel", broken)
    with pytest.raises(RuntimeError, match="planted failure"):
        run_config(_config(), n_jobs=2, backend="dask")
    assert recorder.clusters[1][0].status.name == "closed"
