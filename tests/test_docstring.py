"""Shared docstring fragments (``skbandit._docstring.fill_doc``).

A docstring written with a ``{name}`` placeholder line reads as numpydoc only
once the fragment is in: the public docstrings must hold no placeholder left,
and a fragment must land at the placeholder's indentation.
"""

from __future__ import annotations

import importlib
import inspect
import re

import pytest

from skbandit._docstring import fill_doc

PLACEHOLDER = re.compile(r"^[ \t]*\{\w+\}[ \t]*$", re.MULTILINE)

PUBLIC_MODULES = (
    "skbandit",
    "skbandit.datasets",
    "skbandit.evaluation",
    "skbandit.experiments",
    "skbandit.linear_model",
    "skbandit.multiclass",
    "skbandit.pipeline",
    "skbandit.preprocessing",
)


def _public_docstrings():
    seen = set()
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            yield f"{module_name}.{name}", inspect.getdoc(obj) or ""
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if attr.startswith("_") or not callable(member):
                        continue
                    yield f"{module_name}.{name}.{attr}", inspect.getdoc(member) or ""


def test_no_public_docstring_keeps_a_placeholder():
    left = [
        f"{where}: {match.group().strip()}"
        for where, doc in _public_docstrings()
        for match in PLACEHOLDER.finditer(doc)
    ]
    assert not left, left


def test_fragment_lands_at_the_placeholder_indentation():
    @fill_doc(params="x : int\n    The value.\n\ny : int\n    Another.")
    def f(x, y):
        """Sum.

        Parameters
        ----------
        {params}

        Notes
        -----
        Braces elsewhere stay: {x, y}.
        """

    lines = f.__doc__.splitlines()
    start = lines.index("        x : int")
    assert lines[start : start + 5] == [
        "        x : int",
        "            The value.",
        "",
        "        y : int",
        "            Another.",
    ]
    assert "        Braces elsewhere stay: {x, y}." in lines


def test_unknown_placeholder_is_an_error_at_decoration():
    def f():
        """Doc.

        {missing}
        """

    with pytest.raises(KeyError, match="missing"):
        fill_doc(other="text")(f)
