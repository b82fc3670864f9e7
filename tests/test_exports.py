"""The public names and the build's file lists are explicit, and complete.

A learner is registered by hand, as in scikit-learn: one import and one
``__all__`` line in its sub-package's ``__init__.py`` and in
``skbandit/__init__.py``, and its files named in its package's ``meson.build``
(docs/adding_a_learner.md). These tests find what the explicit lists must hold
by walking the modules and the directories, so a forgotten line fails here
rather than leaving a learner unexported or a file out of the installed
package.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest
from sklearn.base import BaseEstimator

import skbandit

PACKAGE = Path(skbandit.__file__).resolve().parent
LEARNER_PACKAGES = ("skbandit.linear_model", "skbandit.multiclass")
# the public names that are not estimators: the feedback classes and the
# live session bound to a fitted learner
FEEDBACK = {"BanditFeedback", "LoggedFeedback", "OffPolicyWarning", "LiveSession"}


def _defined_learners() -> set[type]:
    """Every concrete public estimator class defined in a learner package,
    found by walking the modules' contents (not from any ``__all__``)."""
    found = set()
    for package_name in LEARNER_PACKAGES:
        package = importlib.import_module(package_name)
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package_name}.{info.name}")
            for _, obj in inspect.getmembers(module, inspect.isclass):
                if (
                    issubclass(obj, BaseEstimator)
                    and obj.__module__ == module.__name__
                    and not inspect.isabstract(obj)
                    and not obj.__name__.startswith("_")
                ):
                    found.add(obj)
    return found


def test_every_learner_is_exported_from_skbandit_and_its_package():
    learners = _defined_learners()
    assert len(learners) >= 12, sorted(c.__name__ for c in learners)
    for cls in learners:
        package = importlib.import_module(cls.__module__.rsplit(".", 1)[0])
        assert getattr(package, cls.__name__, None) is cls, cls
        assert cls.__name__ in package.__all__, cls
        assert getattr(skbandit, cls.__name__, None) is cls, cls
        assert cls.__name__ in skbandit.__all__, cls


@pytest.mark.parametrize("module", [skbandit, *map(importlib.import_module,
                                                    LEARNER_PACKAGES)],
                         ids=lambda m: m.__name__)  # fmt: skip
def test_every_name_in_all_exists(module):
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert not missing
    assert len(set(module.__all__)) == len(module.__all__)


def test_only_estimators_feedback_and_version_are_exported():
    """Helpers a module lists in its ``__all__`` (``igw_distribution``,
    ``default_candidates``, the averaging mixin) stay private to their
    package; ``skbandit.__all__`` is sorted."""
    for name in skbandit.__all__:
        if name in FEEDBACK or name == "__version__":
            continue
        obj = getattr(skbandit, name)
        assert isinstance(obj, type) and issubclass(obj, BaseEstimator), name
    assert FEEDBACK | {"__version__"} <= set(skbandit.__all__)
    assert skbandit.__all__ == sorted(skbandit.__all__)
    for package_name in LEARNER_PACKAGES:
        assert set(importlib.import_module(package_name).__all__) <= set(
            skbandit.__all__
        )


# -- the build's file lists ---------------------------------------------------

# the files meson installs or compiles: sources, Cython declarations, headers
SOURCE = re.compile(r"^[\w.]+\.(py|pyx|pxd|h)$|^py\.typed$")
QUOTED = re.compile(r"'([^'\s]+)'")


def unlisted(directory: Path) -> tuple[list[str], list[str]]:
    """``(files of directory not named in its meson.build, names in its
    meson.build that are not files of directory)``."""
    named = {
        name
        for name in QUOTED.findall((directory / "meson.build").read_text())
        if SOURCE.match(name)
    }
    present = {p.name for p in directory.iterdir() if SOURCE.match(p.name)}
    return sorted(present - named), sorted(named - present)


def _package_dirs() -> list[Path]:
    return sorted(p.parent for p in PACKAGE.rglob("__init__.py"))


@pytest.mark.parametrize(
    "directory", _package_dirs(), ids=lambda p: str(p.relative_to(PACKAGE.parent))
)
def test_meson_build_names_every_file(directory):
    """Each package directory's ``meson.build`` names each of its modules,
    kernels, declarations and headers, and only files that exist."""
    assert (directory / "meson.build").is_file(), directory
    missing, stale = unlisted(directory)
    assert not missing, (
        f"{missing} not named in {directory / 'meson.build'}: add them "
        "(a learner package's kernel to `kernels`, another file to `sources` or "
        "install_sources), then "
        "re-run the install command (python -m pip install --no-build-isolation -e .)"
    )
    assert not stale, f"{stale} named in {directory / 'meson.build'} do not exist"


def test_the_build_check_sees_a_new_and_a_removed_file(tmp_path):
    (tmp_path / "meson.build").write_text(
        "py.install_sources(['__init__.py', '_a.py', '_gone.py'])\n"
        "foreach kernel : ['_a_fast.pyx']\nendforeach\n"
    )
    for name in ["__init__.py", "_a.py", "_a_fast.pyx", "_b_fast.pyx", "notes.txt"]:
        (tmp_path / name).write_text("")
    assert unlisted(tmp_path) == (["_b_fast.pyx"], ["_gone.py"])
