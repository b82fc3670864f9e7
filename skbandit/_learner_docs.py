"""The numpydoc blocks the learners share, filled by ``_docstring.fill_doc``.

A learner's class docstring holds placeholder lines such as ``{passes}`` (in
Parameters), ``{classes}``, ``{features_in}``, ``{n_iter}``,
``{exploration_}`` or, for the whole round bookkeeping, ``{action_rounds}``
(in Attributes); the class decorator :data:`learner_doc`
puts the texts below there. A learner whose text says something of its own
keeps that text literally.
"""

from __future__ import annotations

from skbandit._docstring import FEATURES_IN, ROUND_COUNTS, fill_doc

__all__ = [
    "ACTION_MISTAKES",
    "ACTION_ROUNDS",
    "CLASSES",
    "EXPLORATION_",
    "EXPLORATION_EPSILON",
    "GREEDY_MISTAKES",
    "LABEL_MISTAKES",
    "LABEL_ROUNDS",
    "N_ITER",
    "PASSES",
    "RANDOM_STATE",
    "ROUNDS_PLAYED",
    "learner_doc",
]

#: the passes of ``fit`` (Parameters)
PASSES = """\
max_iter : int, default=5
    Passes over the data in ``fit``. ``partial_fit`` always makes one.
shuffle : bool, default=True
    Whether ``fit`` visits the rows in a new random order each pass.
    ``partial_fit`` always plays the rows in the given order."""

#: the ``exploration`` of the learners playing ``EpsilonGreedy(0.125)`` by
#: default (Parameters; the learner's docstring goes on with its own lines)
EXPLORATION_EPSILON = """\
exploration : str, exploration rule or None, default=None
    How a round's scores become the distribution played
    (:mod:`skbandit.exploration`). ``None``: epsilon-greedy,
    ``EpsilonGreedy(epsilon=0.125)``; a rule's name: that rule with this
    learner's values (``epsilon=0.125`` for the rules with an
    ``epsilon``); an object: that rule (``None`` parameters take this
    learner's values)."""

#: the learner's generator (Parameters)
RANDOM_STATE = """\
random_state : int, RandomState instance or None, default=None
    Seeds the learner's own ``numpy.random.Generator``, which draws two
    uniforms per round (action, tie-break) and the shuffles of ``fit``."""

#: the labels (Attributes)
CLASSES = """\
classes_ : ndarray of shape (n_classes,)
    Class labels, sorted."""

#: the round counter (Attributes)
ROUNDS_PLAYED = """\
t_ : int
    Rounds played so far."""

#: the greedy mistakes of a learner that explores (Attributes)
GREEDY_MISTAKES = """\
n_greedy_mistakes_ : int
    Rounds whose greedy action was wrong (bookkeeping only)."""

#: the mistakes counted by action (Attributes)
ACTION_MISTAKES = f"""\
n_mistakes_ : int
    Rounds whose played action was wrong (online error ``n_mistakes_ / t_``).
{GREEDY_MISTAKES}"""

#: the mistakes counted by label (Attributes)
LABEL_MISTAKES = """\
n_mistakes_ : int
    Rounds whose played label was wrong (online error ``n_mistakes_ / t_``).
n_greedy_mistakes_ : int
    Rounds whose greedy label was wrong (bookkeeping only)."""

#: the passes of the last call (Attributes)
N_ITER = """\
n_iter_ : int
    Passes finished by the last call: ``max_iter`` for ``fit``, 1 for
    ``partial_fit`` (fewer when the call failed)."""

#: the exploration rule played (Attributes)
EXPLORATION_ = """\
exploration_ : exploration rule
    The rule played: ``exploration`` resolved (every parameter set)."""

#: the round bookkeeping of a learner counting its mistakes by action
#: (Attributes, from ``n_features_in_`` to ``exploration_``)
ACTION_ROUNDS = "\n".join(
    [FEATURES_IN, ROUNDS_PLAYED, ACTION_MISTAKES, N_ITER, EXPLORATION_]
)

#: the same, counting by label
LABEL_ROUNDS = "\n".join(
    [FEATURES_IN, ROUNDS_PLAYED, LABEL_MISTAKES, N_ITER, EXPLORATION_]
)

#: the class decorator of the learners' docstrings
learner_doc = fill_doc(
    passes=PASSES,
    exploration_epsilon=EXPLORATION_EPSILON,
    random_state=RANDOM_STATE,
    classes=CLASSES,
    features_in=FEATURES_IN,
    rounds_played=ROUNDS_PLAYED,
    round_counts=ROUND_COUNTS,
    greedy_mistakes=GREEDY_MISTAKES,
    action_rounds=ACTION_ROUNDS,
    label_rounds=LABEL_ROUNDS,
    n_iter=N_ITER,
    exploration_=EXPLORATION_,
)
