"""The skeleton's layout (``skbandit._base``, its module docstring).

``BaseBanditClassifier`` is composed of one mixin per responsibility: the
mixins define disjoint sets of names (so their order in the bases changes
nothing but ``__getstate__``, which extends scikit-learn's), the package's
module map lists every module and the class's method resolution order, and
the state's finiteness check (the compiled ``within_bound`` scan) agrees with
NumPy's ``isfinite``.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

import skbandit._base
from skbandit import Banditron, SquareCB
from skbandit.base import BaseBanditClassifier

# Names every class has in its own __dict__ (not definitions of the skeleton).
_CLASS_NAMES = {
    "__module__",
    "__qualname__",
    "__doc__",
    "__dict__",
    "__weakref__",
    "__annotations__",
    "__annotate__",
    "__annotate_func__",
    "__annotations_cache__",
    "__firstlineno__",
    "__static_attributes__",
    "__type_params__",
    "__abstractmethods__",
    "_abc_impl",
}


def _mixins():
    return [
        cls
        for cls in BaseBanditClassifier.__mro__
        if cls.__module__.startswith("skbandit._base.")
    ]


def _own_names(cls) -> set[str]:
    return set(vars(cls)) - _CLASS_NAMES


def test_the_mixins_define_disjoint_names():
    """No mixin overrides another or the class's own definitions; the only
    names they share with scikit-learn's bases are ``__getstate__``
    (``TransactionMixin`` drops the kept kernel and an open session from
    scikit-learn's) and ``set_params`` (``StateMixin``'s refuses while a
    ``LiveSession`` is open)."""
    mixins = _mixins()
    assert len(mixins) == 6
    seen: dict[str, str] = {
        n: "BaseBanditClassifier" for n in _own_names(BaseBanditClassifier)
    }
    for cls in mixins:
        for name in _own_names(cls):
            assert name not in seen, f"{name} in {cls.__name__} and {seen[name]}"
            seen[name] = cls.__name__
    sklearn_names = set()
    for base in (*ClassifierMixin.__mro__, *BaseEstimator.__mro__):
        if base is not object:
            sklearn_names |= _own_names(base)
    shared = {n for cls in mixins for n in _own_names(cls)} & sklearn_names
    assert shared == {"__getstate__", "set_params"}


def test_the_module_map_lists_every_module_and_the_mro():
    """The package docstring is the map a reader navigates by: every module
    of ``skbandit/_base`` has its entry, and the method resolution order it
    states is the class's."""
    doc = skbandit._base.__doc__
    folder = Path(skbandit._base.__file__).parent
    modules = sorted(p.stem for p in folder.glob("*.py") if p.stem != "__init__")
    assert modules, folder
    for name in modules:
        assert re.search(rf"^``{name}``$", doc, re.MULTILINE), name
    stated = re.search(r"Method resolution order:(.*?)\.\n", doc, re.DOTALL)
    assert stated is not None
    names = re.findall(r"``(\w+)``", stated.group(1))
    mro = [cls.__name__ for cls in BaseBanditClassifier.__mro__]
    assert names == mro[: len(names)]
    assert names[-1] == "BaseEstimator"
    for cls in _mixins():
        assert inspect.getmodule(cls).__name__.rsplit(".", 1)[1] in modules


_VALUES = [0.0, -0.0, 5e-324, -2.2e-308, 1.7976931348623157e308, -1e308]
_NONFINITE = [np.nan, -np.nan, np.inf, -np.inf]


@pytest.mark.parametrize("bad", [None, *_NONFINITE])
@pytest.mark.parametrize("where", [0, 7, -1])
def test_state_finite_agrees_with_numpy(bad, where):
    """``_state_finite`` (the copy mode's check of the whole state) is
    ``np.isfinite(...).all()`` over every floating-point state array: the
    largest finite values, subnormals and signed zeros pass; NaN (either
    sign) and infinities fail wherever they are."""
    X = np.random.default_rng(0).normal(size=(20, 4))
    est = Banditron(random_state=0).fit(X, np.arange(20) % 3)
    coef = np.resize(np.array(_VALUES), est.coef_.shape).astype(np.float64)
    if bad is not None:
        coef.reshape(-1)[where] = bad
    est.coef_[...] = coef
    assert est._state_finite() == bool(np.isfinite(coef).all())


def test_state_finite_reads_integer_state_as_finite():
    """SquareCB's ``n_updates_`` (int64) is state too: always finite, while a
    NaN in its float arrays is found."""
    X = np.random.default_rng(1).normal(size=(30, 4))
    est = SquareCB(random_state=0).fit(X, np.arange(30) % 3)
    assert est.n_updates_.dtype.kind == "i"
    assert est._state_finite()
    est.grad_sq_[0, 0] = np.nan
    assert not est._state_finite()


def test_state_finite_reaches_a_pipeline_candidates_learner():
    """A selector's check of its whole state reaches the learner inside a
    pipeline candidate (held learners hold learners: the copy mode's check
    would otherwise miss a NaN in the default's nonlinear candidate), and
    its rollback point records the same learners in the same order."""
    from sklearn.kernel_approximation import RBFSampler

    from skbandit import OnlineSelector
    from skbandit.pipeline import make_bandit_pipeline
    from skbandit.preprocessing import OnlineStandardScaler

    X = np.random.default_rng(2).normal(size=(40, 3))
    pipe = make_bandit_pipeline(
        OnlineStandardScaler(),
        RBFSampler(n_components=16, gamma=0.5, random_state=0),
        SquareCB(),
        random_state=0,
    )
    sel = OnlineSelector(candidates=[pipe, SquareCB()], random_state=0)
    sel.fit(X, np.arange(40) % 3)
    held = sel._held_learners()
    assert held == sel.candidates_
    assert held[0]._held_learners() == [held[0].learner_]
    _, subs = sel._rollback_point()
    assert len(subs) == 2 and len(subs[0][1]) == 1  # the pipeline's learner
    assert sel._state_finite()
    held[0].learner_.coef_[0, 0] = np.nan
    assert not sel._state_finite()
