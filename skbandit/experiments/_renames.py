"""Parameters recorded under older names, translated to today's.

Configurations recorded before a parameter was renamed (``results.json`` files
written by older versions) are translated on load by :func:`upgrade_config`
(the table ``RENAMED_PARAMETERS``); :func:`upgrade_params` translates one
learner's parameters.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["EPSILON", "RENAMED_PARAMETERS", "upgrade_config", "upgrade_params"]

#: The grid key of the exploration rate: the ``epsilon`` of a learner's default
#: exploration rule (``skbandit.exploration``; the papers' gamma), set with
#: ``set_params`` on the learners whose default rule has one.
EPSILON = "exploration__epsilon"


#: Parameters renamed since results were first recorded (CHANGELOG, "Changed
#: (renamed parameters)", issues 20 and 33): ``(learner, old key) -> new key``,
#: the learner ``None`` for every learner. The exploration rates moved into the
#: exploration rules and are set through the learner's default rule
#: (``exploration__epsilon`` and the rule's other parameters); the step sizes
#: moved into the step-size rules of ``skbandit.optim`` (``step_size`` and
#: ``step_size__learning_rate``). Besides these keys, a number given as
#: ``exploration`` (``OffsetTree(exploration=0.1)``,
#: ``OnlineSelector(exploration=0.5)``) is the rate of the learner's default
#: epsilon-greedy rule, ``exploration__epsilon``; ``Gaptron``'s ``gamma="auto"``
#: is the default rule's ``None`` epsilon; and the values of renamed
#: parameters translate as ``_RENAMED_VALUES`` says.
RENAMED_PARAMETERS: dict[tuple[str | None, str], str] = {
    (None, "gamma"): EPSILON,
    ("ConservativeOneVsAll", "variant"): "update",
    ("OffsetTree", "base"): "update",
    ("Gaptron", "eta"): "step_size",
    ("Gaptron", "learning_rate"): "step_size",
    ("Gaptron", "adagrad_scale"): "step_size__learning_rate",
    ("SquareCB", "regressor"): "step_size",
    ("SquareCB", "learning_rate"): "step_size__learning_rate",
    ("PNewtron", "alpha"): "scale",
    ("SeparableOneVsAll", "update"): "update_scope",
    ("SquareCB", "gamma_scale"): "exploration__scale",
    ("SquareCB", "gamma_exponent"): "exploration__exponent",
    ("OnlineSelector", "exploration_decay"): "exploration__decay",
    ("OnlineSelector", "min_exploration"): "exploration__min_epsilon",
}

#: Recorded values of renamed parameters, by ``(learner, new key)``: Gaptron's
#: ``learning_rate`` (and ``eta``, its older name) ``"adagrad"`` and ``"auto"``
#: are the rule names ``"adagrad"`` and ``"constant"`` (the theory's step), a
#: number is a constant step (``step_size="constant"``,
#: ``step_size__learning_rate``); SquareCB's ``regressor="sgd"`` is
#: ``step_size="constant"``; SeparableOneVsAll's ``update`` ``"paper"`` and
#: ``"full"`` are ``update_scope`` ``"played"`` and ``"all"``.
_RENAMED_VALUES: dict[tuple[str, str], dict[str, str]] = {
    ("Gaptron", "step_size"): {"adagrad": "adagrad", "auto": "constant"},
    ("SquareCB", "step_size"): {"sgd": "constant"},
    ("SeparableOneVsAll", "update_scope"): {"paper": "played", "full": "all"},
}


def _translated(name: str, key: str, value: Any) -> list[tuple[str, Any]]:
    """The current ``(key, value)`` pairs of a recorded parameter of learner
    ``name`` (two for a recorded constant step of Gaptron: the rule's name and
    its rate)."""
    if (
        key == "exploration"
        and isinstance(value, int | float)
        and not isinstance(value, bool)
    ):
        return [(EPSILON, value)]
    new = RENAMED_PARAMETERS.get((name, key), RENAMED_PARAMETERS.get((None, key)))
    if new is None:
        return [(key, value)]
    if name == "Gaptron" and key == "gamma" and value == "auto":
        value = None
    if isinstance(value, str):
        return [(new, _RENAMED_VALUES.get((name, new), {}).get(value, value))]
    if new == "step_size":  # a number: Gaptron's constant step
        return [(new, "constant"), ("step_size__learning_rate", value)]
    return [(new, value)]


def _renamed(name: str, key: str, value: Any) -> tuple[str, Any]:
    """The current ``(key, value)`` of a recorded parameter of learner ``name``
    (the last pair of ``_translated``: the one a grid varies)."""
    return _translated(name, key, value)[-1]


def upgrade_params(name: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """Recorded parameters of learner ``name`` in today's names.

    Translates the keys of ``RENAMED_PARAMETERS`` (and a number given as
    ``exploration``); parameters under their current names pass unchanged.

    Examples
    --------
    >>> from skbandit.experiments._renames import upgrade_params
    >>> upgrade_params("OffsetTree", {"update": "pa", "exploration": 0.1})
    {'update': 'pa', 'exploration__epsilon': 0.1}
    >>> upgrade_params("Banditron", {"gamma": 0.3})
    {'exploration__epsilon': 0.3}
    >>> upgrade_params("SquareCB", {"regressor": "adagrad", "learning_rate": 0.1})
    {'step_size': 'adagrad', 'step_size__learning_rate': 0.1}
    >>> upgrade_params("Gaptron", {"learning_rate": 0.1})
    {'step_size': 'constant', 'step_size__learning_rate': 0.1}
    """
    return dict(
        pair for key, value in params.items() for pair in _translated(name, key, value)
    )


def upgrade_config(config: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A recorded configuration in today's parameter names, and what changed.

    Every learner's ``params``, ``grid`` keys and ``per_dataset`` parameters
    go through :func:`upgrade_params`; the plot kind ``"gamma"`` is now
    ``"epsilon"``. Returns the translated copy and one message per
    translated parameter (empty for a configuration in today's names).
    """
    config = dict(config)
    notes: list[str] = []
    learners = []
    for learner in config.get("learners", []):
        name = learner["name"]
        out = dict(learner)
        out["params"] = upgrade_params(name, learner.get("params", {}))
        out["grid"] = {}
        for key, values in learner.get("grid", {}).items():
            # the pairs before the last of an expansion are fixed (the rule's
            # name of a grid of constant steps): parameters of every point
            first = _translated(name, key, values[0] if values else None)
            out["params"].update(first[:-1])
            out["grid"][first[-1][0]] = [_renamed(name, key, v)[1] for v in values]
        out["per_dataset"] = {
            dataset: upgrade_params(name, params)
            for dataset, params in learner.get("per_dataset", {}).items()
        }
        for key, value in _keys(learner):
            new = _renamed(name, key, value)[0]
            if key != new:
                message = (
                    f"{learner.get('label', name)}: recorded parameter {key!r} "
                    f"is {new!r} today"
                )
                if message not in notes:
                    notes.append(message)
        learners.append(out)
    config["learners"] = learners
    if "plots" in config:
        config["plots"] = ["epsilon" if p == "gamma" else p for p in config["plots"]]
    return config, notes


def _keys(learner: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """A learner dict's parameters ``(key, value)``, in a fixed order (params,
    grid with its first value, per-data-set)."""
    keys = list(learner.get("params", {}).items())
    keys += [(k, v[0] if v else None) for k, v in learner.get("grid", {}).items()]
    for params in learner.get("per_dataset", {}).values():
        keys += list(params.items())
    return keys
