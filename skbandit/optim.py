"""Step-size rules: how a learner scales its gradient steps.

A learner that takes gradient steps (``Gaptron``, ``SquareCB``) takes
``step_size=``: the name of a rule (that rule with the learner's values for
it) or one of the objects below, whose parameters are searchable like an
estimator's (``GridSearchCV(clf, {"step_size__learning_rate": [0.1, 1.0]})``;
the learner then plays its default rule with that parameter). The resolved
rule a fitted learner plays is its ``step_size_`` attribute. A learner refuses
a rule its update cannot play, and says why.

With the gradient ``g_t`` of round ``t`` (``g_{t,i}`` its coordinate ``i``)
and ``eta`` = ``learning_rate``, the update is ``w_i -= eta_{t,i} g_{t,i}``
with:

- ``Constant``: ``eta_{t,i} = eta``.
- ``AdaGrad`` (Duchi, Hazan and Singer 2011 [1]_): per coordinate,
  ``eta_{t,i} = eta / sqrt(G_i)``, ``G_i = sum_{s <= t} g_{s,i}^2`` (a
  coordinate is not moved while ``G_i = 0``); with ``per_coordinate=False``
  one accumulator, the AdaGrad-norm step (Streeter and McMahan 2010 [2]_;
  Ward, Wu and Bottou 2019 [3]_)
  ``eta_t = eta / sqrt(2 (1e-8 + sum_{s <= t} ||g_s||^2))``: ``eta`` is then
  the comparator norm the regret bound is stated for (the weights move by
  about ``eta`` over a run whatever the size of the gradients).
- ``Normalized``: algorithm NAG of Ross, Mineiro and Langford (2013) [4]_,
  Vowpal Wabbit's default: per-feature scales ``s_i`` (the largest ``|x_i|`` seen;
  the weight is rescaled by ``s_i / |x_i|`` when its scale grows),
  ``eta_t = eta sqrt(t / N_t)`` with ``N_t = sum_{s <= t} sum_i
  (x_{s,i} / s_i)^2`` and ``eta_{t,i} = eta_t / (s_i sqrt(G_i))``: invariant
  to rescaling any feature.

Each rule is compiled (``skbandit._core._step``) and shared by Gaptron's
kernel and the regression oracle of ``SquareCB`` (``skbandit._core._oracle``).

References
----------
.. [1] J. Duchi, E. Hazan and Y. Singer, "Adaptive subgradient methods for
   online learning and stochastic optimization", JMLR 12, 2011.
.. [2] M. Streeter and H. B. McMahan, "Less regret via online conditioning",
   arXiv:1002.4862, 2010.
.. [3] R. Ward, X. Wu and L. Bottou, "AdaGrad stepsizes: sharp convergence
   over nonconvex landscapes", ICML 2019.
.. [4] S. Ross, P. Mineiro and J. Langford, "Normalized online learning",
   UAI 2013.
"""

from __future__ import annotations

from numbers import Real
from typing import Any, ClassVar

from sklearn.base import BaseEstimator, clone
from sklearn.utils._param_validation import (
    Interval,
    InvalidParameterError,
    StrOptions,
)

from skbandit._core._oracle import STEP_KINDS

__all__ = ["AdaGrad", "Constant", "Normalized"]


class BaseStepSize(BaseEstimator):
    """Base class of the step-size rules (parameter objects).

    A rule has scikit-learn's parameter interface (``get_params``,
    ``set_params``, ``clone``); its printed form states every value it plays.
    A learner validates it when it resolves it and passes its compiled form
    (``_compile``) to its kernel.
    """

    #: the name a learner's ``step_size`` string uses for this rule
    name: ClassVar[str]

    _parameter_constraints: ClassVar[dict] = {
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, learning_rate: float = 0.5) -> None:
        self.learning_rate = learning_rate

    def _compile(self) -> tuple[int, float, bool]:
        """The compiled rule's ``(kind, learning rate, per coordinate)``
        (``step_rule`` of ``skbandit._core._step``)."""
        return (
            STEP_KINDS[self.name],
            float(self.learning_rate),
            bool(getattr(self, "per_coordinate", False)),
        )


class Constant(BaseStepSize):
    """A constant step: ``eta_t = learning_rate``.

    Parameters
    ----------
    learning_rate : float > 0, default=0.5
        The step ``eta``.

    Examples
    --------
    >>> from skbandit import Gaptron
    >>> from skbandit.optim import Constant
    >>> Gaptron(step_size=Constant(0.1)).step_size
    Constant(learning_rate=0.1)
    """

    name = "constant"


class AdaGrad(BaseStepSize):
    """AdaGrad: steps scaled by the root of the sum of the squared gradients.

    Per coordinate (Duchi, Hazan and Singer 2011): ``eta_{t,i} = eta /
    sqrt(G_i)`` with ``G_i = sum_{s <= t} g_{s,i}^2`` (the current gradient
    included; a coordinate is not moved while ``G_i = 0``). With
    ``per_coordinate=False``, the AdaGrad-norm step (Streeter and McMahan 2010;
    Ward, Wu and Bottou 2019) ``eta_t = eta / sqrt(2 (1e-8 + sum_{s <= t}
    ||g_s||^2))``, ``eta`` the comparator norm of the regret bound.

    Parameters
    ----------
    learning_rate : float > 0, default=0.5
        The scale ``eta``.
    per_coordinate : bool, default=True
        One accumulator per coordinate (diagonal AdaGrad), or one for the
        whole gradient (AdaGrad-norm).

    Examples
    --------
    >>> from skbandit.optim import AdaGrad
    >>> AdaGrad(1024.0, per_coordinate=False)
    AdaGrad(learning_rate=1024.0, per_coordinate=False)
    """

    name = "adagrad"

    _parameter_constraints: ClassVar[dict] = {
        **BaseStepSize._parameter_constraints,
        "per_coordinate": ["boolean"],
    }

    def __init__(self, learning_rate: float = 0.5, *, per_coordinate: bool = True):
        super().__init__(learning_rate)
        self.per_coordinate = per_coordinate


class Normalized(BaseStepSize):
    """Normalized adaptive gradient (NAG; Ross, Mineiro and Langford 2013).

    Vowpal Wabbit's default update. Per feature a scale ``s_i``, the largest
    ``|x_i|`` seen (when it grows, ``w_i *= s_i / |x_i|``); per weight the
    accumulator ``G_i = sum g_i^2``; the count ``t`` of updates and
    ``N_t = sum_{s <= t} sum_i (x_{s,i} / s_i)^2``. The step is
    ``w_i -= eta sqrt(t / N_t) g_i / (s_i sqrt(G_i))``: invariant to rescaling
    any feature.

    Parameters
    ----------
    learning_rate : float > 0, default=0.5
        The rate ``eta``.

    Examples
    --------
    >>> from skbandit import SquareCB
    >>> from skbandit.optim import Normalized
    >>> SquareCB(step_size=Normalized(0.25)).step_size
    Normalized(learning_rate=0.25)
    """

    name = "normalized"


#: The rules by name (a learner's ``step_size`` string).
RULES: dict[str, type[BaseStepSize]] = {
    cls.name: cls for cls in (Constant, AdaGrad, Normalized)
}


def step_size_constraint() -> list:
    """The ``_parameter_constraints`` entry of ``step_size``."""
    return [StrOptions(set(RULES)), BaseStepSize]


class StepSizeMixin:
    """The ``step_size`` parameter of a learner (mixed in before its base).

    A learner declares the rules it accepts with its values for them
    (``_step_size_values``: a method, rule name -> parameters) and why it
    refuses the others (``_step_size_refusal``). Its ``_make_kernel`` calls
    ``_step_rule()``, which resolves the parameter, stores the resolved rule
    as ``step_size_`` and returns the compiled rule.
    """

    # the parameter (set by the learner's __init__)
    step_size: str | BaseStepSize
    # why a rule is refused (the learner's docstring says it too)
    _step_size_refusal: ClassVar[str] = ""

    def _step_size_values(self, n_classes: int | None) -> dict[str, dict[str, Any]]:
        """Rule name -> this learner's parameters of the rule it accepts
        (``n_classes`` None: not yet known; the values may then be partial)."""
        raise NotImplementedError

    def _step_size_accepts(self, rule: BaseStepSize) -> bool:
        """Whether the learner's update can play ``rule`` (beyond its name)."""
        return True

    def _step_size_object(self, name: str, n_classes: int | None) -> BaseStepSize:
        return RULES[name](**self._step_size_values(n_classes)[name])

    def _step_size_rule(self, n_classes: int | None = None) -> BaseStepSize:
        """The rule ``step_size`` gives, checked: accepted by this learner,
        its parameters valid."""
        spec = self.step_size
        values = self._step_size_values(n_classes)
        name = spec.name if isinstance(spec, BaseStepSize) else str(spec)
        owner = type(self).__name__
        if name not in values or (
            isinstance(spec, BaseStepSize) and not self._step_size_accepts(spec)
        ):
            accepted = ", ".join(repr(n) for n in values)
            raise InvalidParameterError(
                f"The 'step_size' parameter of {owner} does not accept "
                f"{spec!r}; it accepts {accepted}. {self._step_size_refusal}".rstrip()
            )
        if not isinstance(spec, BaseStepSize):
            return self._step_size_object(name, n_classes)
        try:
            spec._validate_params()
        except InvalidParameterError as exc:
            raise InvalidParameterError(
                f"The 'step_size' parameter of {owner}: {exc}"
            ) from exc
        return spec

    def _validate_params(self) -> None:
        super()._validate_params()  # type: ignore[misc]  # the learner's (a mixin)
        self._step_size_rule()

    def _step_rule(self, n_classes: int) -> tuple[int, float, bool]:
        """The compiled form of the resolved rule (stored as ``step_size_``)."""
        rule = clone(self._step_size_rule(n_classes))
        old = self.__dict__.get("step_size_")
        # a kernel built for predict leaves the fitted attribute as it was
        # when the rule did not change
        if not (type(old) is type(rule) and vars(old) == vars(rule)):
            self.step_size_ = rule
        return self.step_size_._compile()

    def set_params(self, **params):
        """Set the parameters; ``step_size__<name>`` on a learner whose
        ``step_size`` is a rule's name first makes it that rule's object with
        this learner's values (also when the name is set in the same call)."""
        if any(key.startswith("step_size__") for key in params):
            spec = params.get("step_size", self.step_size)
            if isinstance(spec, str):
                n_classes = getattr(self, "classes_", None)
                k = None if n_classes is None else len(n_classes)
                params["step_size"] = self._step_size_object(spec, k)
        return super().set_params(**params)
