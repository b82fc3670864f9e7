"""Exploration rules: how a learner turns a row's scores into the distribution it plays.

Every bandit learner takes ``exploration=``: ``None`` (the learner's own rule,
the default), the name of a rule (that rule with the learner's defaults for
it), or one of the objects below, whose parameters are searchable like an
estimator's (``GridSearchCV(clf, {"exploration__epsilon": [0.01, 0.1]})``; the
learner then plays its default rule with that parameter). A parameter left at
``None`` takes the learner's value for it. The resolved rule a fitted learner
plays is its ``exploration_`` attribute.

Each rule is compiled (``skbandit._core._explore``; a kernel's distribution is
one call of it) and has a NumPy twin, ``distribution``, computing the same
floating-point operations in the same order (the tests compare them bit for
bit). With scores ``s`` of the ``k`` classes, the tie-broken greedy label
``g`` (an exact maximiser of ``s``) and the 1-based round ``t``:

- ``Greedy``: ``p = e_g``.
- ``EpsilonGreedy``: ``p = (1 - e_t) e_g + (e_t / k) 1``, ``e_t = epsilon`` or,
  with ``decay > 0``, ``max(min_epsilon, epsilon t^-decay)``; SOBA's adaptive
  rate ``epsilon="adaptive"``.
- ``Softmax``: ``p = (1 - epsilon) softmax(scale s) + epsilon / k``.
- ``InverseGap``: ``p_a = 1 / (k + gamma_a (s_g - s_a))`` for ``a != g``,
  ``p_g`` the rest (Foster and Rakhlin 2020), ``gamma_a = scale t^exponent``.
- ``GapMap``: ``p = (1 - u) e_g + (u / k) 1``, ``u = epsilon + (1 - epsilon) a(s)``
  with Gaptron's gap map ``a`` of a loss.
- ``Conservative``: ``e_g`` when ``s_g >= threshold``, else uniform.

See ``docs/algorithms.md`` ("Exploration") for each rule's formula and where
it comes from.
"""

from __future__ import annotations

import operator
import weakref
from typing import Any, ClassVar

from sklearn.utils._param_validation import InvalidParameterError, StrOptions

# the rules and their registry (which the learners and the tests read)
from skbandit._exploration_rules import (
    RULES,
    BaseExploration,
    Conservative,
    EpsilonGreedy,
    GapMap,
    Greedy,
    InverseGap,
    Softmax,
)

__all__ = [
    "Conservative",
    "EpsilonGreedy",
    "GapMap",
    "Greedy",
    "InverseGap",
    "Softmax",
]


# The parameter values each rule object last passed validation with
# (``ExplorationMixin._exploration_checked``; weak keys: no rule is kept alive).
_VALIDATED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class ExplorationMixin:
    """The ``exploration`` parameter of a learner (mixed in before its base).

    A learner declares its default rule (``_default_exploration``, a rule
    name) and the rules it accepts with its values for their ``None``
    parameters (``_exploration_values``, rule name -> dict; a method of the
    same name may compute them from the learner's parameters). Its
    ``_make_kernel`` calls ``_explorer(n_classes, **context)``, which resolves
    the parameter, stores the resolved rule as ``exploration_`` and returns the
    compiled explorer.
    """

    _default_exploration: ClassVar[str]
    _exploration_values: ClassVar[dict[str, dict[str, Any]]]
    # the parameter (set by the learner's __init__)
    exploration: str | BaseExploration | None

    # why a rule is refused (the learner's docstring says it too)
    _exploration_refusal: ClassVar[str] = ""
    # whether the learner has SOBA's statistic (EpsilonGreedy("adaptive"))
    _exploration_statistic: ClassVar[bool] = False

    def _exploration_defaults(self) -> dict[str, dict[str, Any]]:
        return self._exploration_values

    def _exploration_object(self, name: str) -> BaseExploration:
        """The object of the rule ``name`` (a string ``exploration``, and
        ``None`` for the default rule): the rule with its ``None`` parameters
        left for ``_exploration_defaults``. A learner whose values for a rule
        are not ``None`` parameters of it overrides this."""
        if name not in RULES:
            raise InvalidParameterError(
                f"The 'exploration' parameter of {type(self).__name__} must "
                f"name a rule in {sorted(RULES)}; got {name!r}"
            )
        return RULES[name]()

    def _exploration_name(self, values: dict | None = None) -> str:
        """The name of the rule ``exploration`` gives, checked against the
        rules this learner accepts (the keys of ``values``, by default the
        class declaration); an object's parameters are validated (a name's
        rule has only ``None`` parameters: nothing to check). O(1) for ``None``
        and names: every ``partial_fit`` validates the parameters."""
        spec = self.exploration
        rule = spec if isinstance(spec, BaseExploration) else None
        if rule is not None:
            name = rule.name
        else:
            name = self._default_exploration if spec is None else str(spec)
        if values is None:
            values = self._exploration_values
        if name not in values:
            accepted = ", ".join(repr(n) for n in values)
            cls = type(rule) if rule is not None else RULES.get(name)
            kind = getattr(cls, "__name__", "")
            raise InvalidParameterError(
                f"The 'exploration' parameter of {type(self).__name__} does not "
                f"accept the rule {name!r} ({kind}); it accepts {accepted}. "
                f"{self._exploration_refusal}".rstrip()
            )
        if rule is not None and not self._exploration_checked(rule):
            try:
                rule._validate_params()
            except InvalidParameterError as exc:
                raise InvalidParameterError(
                    f"The 'exploration' parameter of {type(self).__name__}: {exc}"
                ) from exc
            if (
                getattr(rule, "epsilon", None) == "adaptive"
                and not self._exploration_statistic
            ):
                raise InvalidParameterError(
                    f"The 'exploration' parameter of {type(self).__name__}: "
                    "EpsilonGreedy(epsilon='adaptive') is SOBA's adaptive rate; "
                    "it reads SOBA's statistic, which this learner does not have."
                )
            _VALIDATED[rule] = tuple(vars(rule).values())
        return name

    @staticmethod
    def _exploration_checked(rule: BaseExploration) -> bool:
        """Whether ``rule``'s parameter values are the objects it last passed
        validation with (compared by identity, as ``_validate_params_cached``):
        a learner validates its parameters on every call, and a rule's
        scikit-learn validation is not free. Kept beside the
        rule (``_VALIDATED``), which is a parameter and must not change."""
        cached = _VALIDATED.get(rule)
        values = tuple(vars(rule).values())
        return (
            cached is not None
            and len(cached) == len(values)
            and all(map(operator.is_, cached, values))
        )

    def _exploration_rule(self, values: dict | None = None) -> BaseExploration:
        """The rule ``exploration`` gives (unresolved: ``None`` parameters
        left), checked (``_exploration_name``)."""
        name = self._exploration_name(values)
        spec = self.exploration
        if isinstance(spec, BaseExploration):
            return spec
        return self._exploration_object(name)

    def _validate_params(self) -> None:
        super()._validate_params()  # type: ignore[misc]  # the learner's (a mixin)
        self._exploration_name()

    def _resolve_exploration(self) -> BaseExploration:
        values = self._exploration_defaults()
        rule = self._exploration_rule(values)
        try:
            return rule._resolved(values[rule.name])
        except InvalidParameterError as exc:
            raise InvalidParameterError(
                f"The 'exploration' parameter of {type(self).__name__}: {exc}"
            ) from exc

    def _explorer(self, n_classes: int, **context):
        """The compiled explorer of the resolved rule (``exploration_``)."""
        rule = self._resolve_exploration()
        old = self.__dict__.get("exploration_")
        # a kernel built for predict or exploration_distribution leaves the
        # fitted attribute as it was when the rule did not change
        if not (type(old) is type(rule) and vars(old) == vars(rule)):
            self.exploration_ = rule
        return self.exploration_._compile(n_classes, **context)

    def set_params(self, **params):
        """Set the parameters; ``exploration__<name>`` on a learner whose
        ``exploration`` is ``None`` or a rule's name first makes it that rule's
        object (the learner's default rule for ``None``)."""
        nested = any(key.startswith("exploration__") for key in params)
        if nested and "exploration" not in params:
            spec = self.exploration
            if spec is None or isinstance(spec, str):
                name = self._default_exploration if spec is None else spec
                super().set_params(exploration=self._exploration_object(name))
        return super().set_params(**params)


def rule_values(
    epsilon: float | str | None = None, **rules: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    """A learner's ``_exploration_values`` accepting every rule: ``epsilon``
    for the rules with an ``epsilon`` (when given), updated by ``rules``
    (rule name -> values)."""
    shared = {} if epsilon is None else {"epsilon": epsilon}
    values = {
        name: dict(shared) if "epsilon" in cls().get_params() else {}
        for name, cls in RULES.items()
    }
    for name, extra in rules.items():
        values[name].update(extra)
    return values


def exploration_constraint() -> list:
    """The ``_parameter_constraints`` entry of ``exploration``."""
    return [None, StrOptions(set(RULES)), BaseExploration]
