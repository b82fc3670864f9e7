"""The public estimators follow from their modules (``skbandit._discovery``).

A learner's module is exported by discovery (no list to edit); the generated
``TYPE_CHECKING`` import blocks that repeat the names for static analysis must
be current (``python tools/sync_exports.py`` rewrites them).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from sklearn.base import BaseEstimator

import skbandit
from skbandit import _discovery
from skbandit.base import BaseBanditClassifier


def _defined_learners() -> set[type]:
    """Every concrete bandit-learner class defined in a learner package,
    found independently of ``_discovery`` (by walking the modules' contents)."""
    found = set()
    for package_name in _discovery.LEARNER_PACKAGES:
        package = importlib.import_module(package_name)
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package_name}.{info.name}")
            for _, obj in inspect.getmembers(module, inspect.isclass):
                if (
                    issubclass(obj, BaseBanditClassifier)
                    and obj.__module__ == module.__name__
                    and not inspect.isabstract(obj)
                    and not obj.__name__.startswith("_")
                ):
                    found.add(obj)
    return found


def test_every_learner_is_exported_from_skbandit_and_its_package():
    learners = _defined_learners()
    assert learners, "no learner found"
    for cls in learners:
        package = cls.__module__.rsplit(".", 1)[0]
        assert getattr(importlib.import_module(package), cls.__name__) is cls
        assert cls.__name__ in importlib.import_module(package).__all__
        assert getattr(skbandit, cls.__name__) is cls
        assert cls.__name__ in skbandit.__all__


def test_only_estimators_feedback_and_version_are_exported():
    """Helpers named in a module's ``__all__`` (``igw_distribution``,
    ``default_candidates``, the averaging mixin) stay private to their package."""
    feedback = {"BanditFeedback", "LoggedFeedback", "OffPolicyWarning"}
    for name in skbandit.__all__:
        if name in feedback or name in ("__version__", "LiveSession"):
            continue
        obj = getattr(skbandit, name)
        assert isinstance(obj, type) and issubclass(obj, BaseEstimator), name
    assert feedback | {"__version__"} <= set(skbandit.__all__)
    assert skbandit.__all__ == sorted(skbandit.__all__)


def test_generated_import_blocks_are_current():
    stale = _discovery.stale_files()
    assert not stale, (
        f"out-of-date generated imports in {[str(p) for p in stale]}: "
        "run `python tools/sync_exports.py`"
    )


def test_the_staleness_check_sees_a_missing_name(monkeypatch):
    """Drop one estimator from what the blocks should contain: the committed
    blocks then differ (the check compares text, not just names present)."""
    real = _discovery.estimator_classes

    def without_banditron(package_name):
        return {n: c for n, c in real(package_name).items() if n != "Banditron"}

    monkeypatch.setattr(_discovery, "estimator_classes", without_banditron)
    stale = {p.parent.name for p in _discovery.stale_files()}
    assert stale == {"skbandit", "linear_model"}


def _meson_files():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "tools" / "meson_files.py"
    spec = importlib.util.spec_from_file_location("meson_files", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_build_lists_kernels_and_modules_and_sees_a_new_file(tmp_path, capsys):
    """``tools/meson_files.py``: ``list`` gives what meson builds and installs
    (kernels, modules, Cython declarations; nothing else), and ``check`` fails
    once a file was added after that list was taken."""
    tool = _meson_files()
    for name in ["__init__.py", "_a.py", "_a_fast.pyx", "_b.pxd", "notes.txt"]:
        (tmp_path / name).write_text("")
    assert tool.main(["list", str(tmp_path)]) == 0
    listed = capsys.readouterr().out.split()
    assert listed == ["__init__.py", "_a.py", "_a_fast.pyx", "_b.pxd"]
    stamp = tmp_path / "stamp"
    configured = ",".join(listed)
    assert tool.main(["check", str(stamp), str(tmp_path), configured]) == 0
    assert stamp.exists()
    (tmp_path / "_c_fast.pyx").write_text("")
    assert tool.main(["check", str(stamp), str(tmp_path), configured]) == 1
    assert "re-run the install command" in capsys.readouterr().err
