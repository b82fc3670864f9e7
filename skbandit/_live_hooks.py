"""What a ``LiveSession`` round needs to know of a learner's block hooks.

A live round runs the block hooks (``_before_block``, ``_after_block``) a
learner overrides around the round, and records, to undo them on a failure,
only what the learner's classes state the hooks may rebind. Two statements,
each covering the hook of the class that makes it (or of a class it
inherits from), never a hook that a subclass adds:

* ``_hook_rebinds``: the attributes the hooks may assign a new object to
  (``hook_plan``);
* ``_before_block_settles``: ``_before_block`` reacts only to a change of the
  parameters, which a session locks, so it runs on the first learned round
  only (``before_block_settles``).
"""

from __future__ import annotations

from typing import Any

from skbandit._base._state import StateMixin

# The hooks a learner may override; any override puts the session on the
# hooked round (the hooks run around every round), but a ``_before_block``
# that settles (``before_block_settles``), which runs on the session's first
# learned round only.
HOOKS = ("_after_block", "_rollback_point", "_restore_point")

# The round counter a meta-learner's hooks advance on the learners it holds
# (``OnlineSelector._after_block``, ``BanditPipeline``'s hooks); the others
# (``n_mistakes_``, ``n_greedy_mistakes_``) no hook writes.
_HELD_COUNTERS: tuple[str, ...] = ("t_",)


def _defined_at(cls, name: str) -> int:
    """The place in ``cls``'s MRO of the class that defines ``name``."""
    return next(i for i, c in enumerate(cls.__mro__) if name in vars(c))


def _covers(cls, statement: str, *hooks: str) -> bool:
    """Whether ``statement`` is made by the class that defines each of
    ``hooks`` or by a subclass of it."""
    return _defined_at(cls, statement) <= min(_defined_at(cls, h) for h in hooks)


def states_rebinds(cls) -> bool:
    """Whether ``cls`` states what its block hooks rebind: it keeps the
    skeleton's rollback point, and its ``_hook_rebinds`` is not None and
    covers its hooks (``_covers``)."""
    if (
        cls._rollback_point is not StateMixin._rollback_point
        or cls._restore_point is not StateMixin._restore_point
        or cls._hook_rebinds is None
    ):
        return False
    return _covers(cls, "_hook_rebinds", "_before_block", "_after_block")


def before_block_settles(learner) -> bool:
    """Whether ``learner``'s ``_before_block`` is settled by one call while
    the parameters are locked (``BaseBanditClassifier._before_block_settles``
    true and covering the hook), and so for every learner it holds,
    recursively."""
    cls = type(learner)
    return (
        cls._before_block_settles
        and _covers(cls, "_before_block_settles", "_before_block")
        and all(before_block_settles(held) for held in learner._held_learners())
    )


def hook_plan(learner) -> tuple[list[object], list[str]] | None:
    """``(objects, names)``: the attributes ``names[i]`` of ``objects[i]``
    that a live round's hooks may rebind: the ``_hook_rebinds`` of the
    learner and of every learner it holds (``_held_learners``, recursively),
    and the round counter ``t_`` of each held learner (a meta-learner's hooks
    advance it: the selector's candidates', a pipeline's learner's); or None
    when one of them does not state its hooks' rebinds (``states_rebinds``:
    the round then records the whole rollback point). The learner's own
    counters are not in it: the session writes them after the round is
    committed, when nothing can fail any more. Fixed while the session is
    open: the parameters and the held learners cannot change."""
    objects: list[object] = []
    names: list[str] = []
    todo: list[tuple[Any, tuple[str, ...]]] = [(learner, ())]
    while todo:
        obj, counters = todo.pop()
        cls = type(obj)
        if not states_rebinds(cls):
            return None
        for name in (*counters, *cls._hook_rebinds):
            objects.append(obj)
            names.append(name)
        todo += [(held, _HELD_COUNTERS) for held in obj._held_learners()]
    return objects, names


def plain_dicts(objects: list[object], names: list[str]) -> list[dict | None]:
    """For each attribute ``names[i]`` of ``objects[i]`` of a plan
    (``hook_plan``), the object's instance dictionary when reading the name
    there is exactly what ``getattr`` reads, else None: the object's class
    keeps ``object``'s attribute lookup (no ``__getattribute__`` or
    ``__getattr__`` of its own) and no class of its MRO has an attribute of
    that name (which, as a data descriptor, would come first, or, as a plain
    value, would be read when the instance has none). Fixed while the session
    is open, as the plan is: the dictionary is the same object as long as
    the learner is (``__setstate__`` updates it in place)."""
    dicts: list[dict | None] = []
    for obj, name in zip(objects, names, strict=True):
        cls = type(obj)
        plain = (
            cls.__getattribute__ is object.__getattribute__
            and not hasattr(cls, "__getattr__")
            and not any(name in vars(c) for c in cls.__mro__)
            and isinstance(getattr(obj, "__dict__", None), dict)
        )
        dicts.append(obj.__dict__ if plain else None)
    return dicts
