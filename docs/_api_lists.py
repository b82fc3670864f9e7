"""The estimator lists of the API reference, generated from the learner packages.

``docs/api.rst`` includes ``_api_<package>.rst`` for each learner sub-package
(``LEARNER_PACKAGES``): an ``autosummary`` list of its estimators (its
``__all__``), as ``skbandit`` exports them. ``conf.py`` writes the files when
Sphinx loads it (before autosummary reads the sources); a new learner's module
adds its page with no edit of ``api.rst``. The files sit beside ``api.rst``
(not committed, not pages of their own) because autosummary resolves a list's
``:toctree:`` from the file it scans, and the include from ``api.rst``:
both must point at ``docs/generated/``. ``tests/test_docs_site.py`` reads
``api.rst`` with the includes expanded (``expand``).
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
LEARNER_PACKAGES = ("skbandit.linear_model", "skbandit.multiclass")


def file_name(package_name: str) -> str:
    """``_api_<sub-package>.rst``, relative to ``docs/``."""
    return f"_api_{package_name.rsplit('.', 1)[-1]}.rst"


def render(package_name: str) -> str:
    """The ``autosummary`` list of one learner sub-package's estimators, as
    names of ``skbandit`` (autosummary reads the file on its own too)."""
    package = importlib.import_module(package_name)
    names = "".join(f"   {name}\n" for name in sorted(package.__all__))
    head = ".. currentmodule:: skbandit\n\n.. autosummary::\n"
    return head + "   :toctree: generated/\n   :template: base.rst\n\n" + names


def lists() -> dict[str, str]:
    """``{path relative to docs/: content}`` of every generated list."""
    return {file_name(p): render(p) for p in LEARNER_PACKAGES}


def write(docs: Path = HERE) -> list[str]:
    """Write the lists beside ``api.rst`` (only the files that changed);
    returns their paths relative to ``docs/``, for ``autosummary_generate``."""
    for name, text in lists().items():
        path = docs / name
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
    return list(lists())


_INCLUDE = re.compile(r"^\.\. include:: (\S+)\s*$", re.MULTILINE)


def expand(text: str) -> str:
    """``api.rst``'s text with each include of a generated list replaced by the
    list (as Sphinx reads it)."""
    generated = lists()
    return _INCLUDE.sub(lambda m: generated.get(m.group(1), m.group(0)), text)
