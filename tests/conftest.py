"""Shared pytest configuration for the skbandit test suite.

- ``--runslow`` enables the tests marked ``slow`` (skipped by default).
- ``shared_data_file(name)`` gives the path of an offline data copy in
  ``../shared/data`` (relative to the repository root). A missing file skips the
  test on a developer's machine but fails it under ``CI=true``, so that CI cannot
  pass without running the data tests.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--runslow",
        action="store_true",
        default=False,
        help="run the tests marked slow (long reproduction runs)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "slow: long reproduction runs, only with --runslow"
    )


def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    if config.getoption("--runslow"):
        return
    skip_slow = pytest.mark.skip(reason="slow test: pass --runslow to run it")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)


def _on_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def shared_data_file(name: str) -> Path:
    """Path of ``name`` in the shared data directory.

    If the file is missing the test is skipped with the reason, except under
    ``CI=true`` where it fails: a CI run must not pass without its data tests.
    """
    path = SHARED_DATA / name
    if not path.is_file():
        reason = (
            f"../shared/data/{name} not found: expected at {path} "
            "(offline copy of the public data set, see ../shared/data/README.md)"
        )
        if _on_ci():
            pytest.fail(f"{reason}; CI=true, so a missing data file is an error")
        pytest.skip(reason)
    return path


@pytest.fixture(scope="session")
def usps_stream() -> tuple[np.ndarray, np.ndarray]:
    """USPS as one stream: training rows then test rows, in file order."""
    path = shared_data_file("usps.npz")
    with np.load(path) as data:
        X = np.vstack([data["X_train"], data["X_test"]]).astype(np.float64)
        y = np.concatenate([data["y_train"], data["y_test"]]).astype(np.int64)
    return X, y
