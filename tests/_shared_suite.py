"""The shared suite's per-entry checks, callable on an entry outside the registry.

The shared test modules parametrise their checks over the registry
(``_registry.ENTRIES``). ``shared_checks`` lists the same check functions with
one value of each of their other parameters, so that a test can run them on an
entry the registry does not hold (``tests/test_adding_a_learner.py`` runs them
on the toy learner of docs/adding_a_learner.md).
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable
from typing import Any

import pytest
from _registry import FULL_PRODUCT

__all__ = ["run_check", "shared_checks"]

# the fixtures a check may ask for besides its parameters
FIXTURES = ("monkeypatch", "tmp_path", "request")
# the type of ``pytest.param(...)``: a parametrised value with its id and marks
_PARAM = type(pytest.param(None))


def _unwrap(value: Any) -> tuple:
    return tuple(value.values) if isinstance(value, _PARAM) else (value,)


def _applies(entries: list, entry) -> bool:
    """A check parametrised over ``entries`` applies to ``entry`` if one of
    them is of its kind (bandit or full-information, compiled kernel or
    Python loop): the lists are ``ENTRIES`` or a kind's subset."""
    return any(
        e.bandit == entry.bandit and e.python_loop == entry.python_loop for e in entries
    )


def _first_values(func: Callable, entry) -> dict[str, Any] | None:
    """``{parameter: its first parametrised value}`` for every parameter of
    ``func`` except ``entry`` (parametrised jointly with ``entry``: the first
    value ``FULL_PRODUCT`` meets); None when the check does not apply to
    ``entry``'s kind, its values are an entry's own settings (``params``) or
    a parameter is neither parametrised nor one of ``FIXTURES``."""
    chosen: dict[str, Any] = {}
    for mark in getattr(func, "pytestmark", []):
        if mark.name != "parametrize":
            continue
        argnames, argvalues = mark.args[0], mark.args[1]
        if isinstance(argnames, str):
            names = [n.strip() for n in argnames.split(",")]
        else:
            names = list(argnames)
        if names == ["entry"]:
            if not _applies([_unwrap(v)[0] for v in argvalues], entry):
                return None
            continue
        if "entry" in names:
            # a product cut along the entries (``_registry.spread``): the values
            # the full-product entry meets; an entry's own settings: skipped
            if "params" in names:
                return None
            full = [
                v.values
                for v in argvalues
                if isinstance(v, _PARAM) and v.values[0].id == FULL_PRODUCT
            ]
            rest = [n for n in names if n != "entry"]
            chosen.update(zip(rest, full[0][1:], strict=True))
            continue
        first = list(argvalues)[0]
        values = (
            _unwrap(first)
            if isinstance(first, _PARAM) or len(names) == 1
            else (tuple(first))
        )
        chosen.update(zip(names, values, strict=True))
    params = inspect.signature(func).parameters
    if "entry" not in params:
        return None
    for name in params:
        if name != "entry" and name not in chosen and name not in FIXTURES:
            return None
    return chosen


def shared_checks(module_names: tuple[str, ...], entry) -> list[Any]:
    """``pytest.param((function, kwargs), id="module::function")`` for each
    check of the modules that takes an ``entry`` and applies to ``entry``."""
    checks = []
    for module_name in module_names:
        module = importlib.import_module(module_name)
        for name, func in inspect.getmembers(module, inspect.isfunction):
            if not name.startswith("test_") or func.__module__ != module_name:
                continue
            kwargs = _first_values(func, entry)
            if kwargs is not None:
                checks.append(pytest.param((func, kwargs), id=f"{module_name}::{name}"))
    return checks


def run_check(check: tuple[Callable, dict], entry, request) -> None:
    """Run one check of ``shared_checks`` on ``entry``."""
    func, kwargs = check
    # the check module's own set-up (what its autouse fixtures do there)
    setup = getattr(sys.modules[func.__module__], "SHARED_SETUP", None)
    if setup is not None:
        setup(request.getfixturevalue("monkeypatch"))
    params = inspect.signature(func).parameters
    fixtures = {n: request.getfixturevalue(n) for n in FIXTURES if n in params}
    if "request" in params:
        fixtures["request"] = request
    func(entry=entry, **kwargs, **fixtures)
