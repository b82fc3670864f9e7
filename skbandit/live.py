"""The live session: the lowest-latency way to serve and learn one row at a time.

A deployed learner serves one request at a time: it picks an action for the
context, the reward is observed later and the learner learns it. ``LiveSession``
is that loop as an object the user asks for, bound to a fitted learner (as
Vowpal Wabbit's workspace or river's ``learn_one``)::

    with LiveSession(learner) as session:
        action, propensity = session.act(x)
        ...  # the reward of ``action`` is observed
        session.learn(x, action, reward, propensity)

The contract is stated in ``LiveSession``'s docstring and in docs/protocol.md.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from skbandit._base._checks import record_attributes
from skbandit._base._rows import _MAX_ABS_X
from skbandit._base._stacklevel import _caller_stacklevel
from skbandit._base._validation import InputValidationMixin
from skbandit._core._kernel import Journal, KernelStatus
from skbandit._core._live import LiveRound
from skbandit._live_hooks import HOOKS, before_block_settles, hook_plan, plain_dicts
from skbandit.base import BaseBanditClassifier
from skbandit.feedback import MIN_PROPENSITY, LoggedFeedback, OffPolicyWarning

if TYPE_CHECKING:
    from types import TracebackType

__all__ = ["LiveSession"]

_MISSING = object()  # an attribute absent when the round's point was taken


def _compiled_path(learner) -> bool:
    """Whether the session plays ``learner``'s compiled kernel directly: a
    ``BaseBanditClassifier`` whose rows reach its kernel as validated (the
    skeleton's ``_validate_X``, not an override that maps them, as a
    pipeline's Python feature maps do) and that was not fitted on named
    features (which scikit-learn checks on every call)."""
    return (
        isinstance(learner, BaseBanditClassifier)
        and type(learner)._validate_X is InputValidationMixin._validate_X
        and "feature_names_in_" not in learner.__dict__
    )


class LiveSession:
    """A live session on a fitted learner: act on one row, learn its reward.

    ``act(x)`` draws an action for one row from the learner's exploration
    policy and returns it with its propensity; ``learn(x, action, reward,
    propensity)`` learns the observed reward of a logged action. The session
    plays exactly what ``learner.sample_actions(x)`` and
    ``learner.partial_fit(x, LoggedFeedback([action], [reward],
    [propensity]))`` would play, call for call: the same actions and
    propensities and the same learner state bit for bit, for dense and CSR
    rows (the same compiled round bodies, the same uniforms of the learner's
    generator, the same own/off-policy rule; docs/logged.md).

    The contract
    ------------
    * **Bound to a fitted learner** (``classes_`` known: ``fit``,
      ``partial_fit`` or a first ``sample_actions`` with ``classes``). Its
      parameters are read when the session opens.
    * **Locked while open**: the learner's ``set_params``, ``fit``,
      ``partial_fit`` and ``sample_actions`` raise a ``RuntimeError`` naming
      the open session; ``predict``, ``decision_function`` and
      ``exploration_distribution`` work and see every learned round. One
      session per learner; a session is used from one thread.
    * **Validated before any state changes**: each row (one row: a 1-D array
      of ``n_features_in_`` values, a ``(1, n_features_in_)`` array or CSR
      matrix; finite, within the learners' magnitude bound, the learner's own
      row rule) and each feedback (``action`` one of ``classes_``, ``reward``
      finite and in the learner's range: 0 or 1 for the learners whose
      algorithm assumes the reward bit, ``[0, 1]`` for the others;
      ``propensity`` in ``[LoggedFeedback.min_propensity, 1]``, the
      ``(0, 1]`` of a probability above ``LoggedFeedback``'s floor
      ``2**-32``). A refused call raises ``ValueError`` (``TypeError`` for
      ``learn`` on a full-information learner, which needs the true label)
      and changes nothing.
    * **No corrupt state**: a round whose scores are not finite, whose
      distribution is not a probability vector, or whose update writes a
      non-finite value raises ``FloatingPointError`` (the messages of
      ``partial_fit``), and that round is undone first (the kernel's writes by
      the undo journal, the learner's hooks by its rollback point, the round's
      uniforms put back): the learner is as before the call.
    * **The uniforms**: the round of ``act`` takes the uniform pair
      ``sample_actions`` would read ahead for it, and ``learn`` the pair
      ``partial_fit`` would consume, from the learner's own generator through
      NumPy's C interface (``bitgen_t``); rows served and not learned are the
      serving cursor (``n_pending_``). ``close`` sets the generator back by the
      pairs of rows served and not learned, so that after the session the
      learner is as after the equivalent public calls (``n_pending_``
      included).
    * **On close** (``close()``, or the end of the ``with`` block) the counters
      are up to date (``t_``, ``n_mistakes_``, ``n_greedy_mistakes_`` after
      each round; ``n_iter_`` is 1 when a round was learned, as after a
      ``partial_fit``) and the learner is unlocked. A closed session refuses
      ``act`` and ``learn``.
    * An off-policy round of a learner whose analysis needs its own data
      warns (``OffPolicyWarning``) once per session.

    Learners. Every skbandit learner is accepted. Those whose kernel reads
    the validated rows directly (every ``BaseBanditClassifier`` not fitted on
    named features and without a row-mapping ``_validate_X``) play the
    compiled round (``skbandit._core._live.LiveRound``); a learner that
    overrides the skeleton's block hooks (e.g. ``OnlineSelector``, ``Gaptron``,
    the rational ``SeparableOneVsAll``) has them run around every round, but
    a ``_before_block`` that only reacts to a change of the parameters, which
    the session locks (``_before_block_settles``: ``SquareCB``'s, the
    selector's and a pipeline's when their learners' do), runs on the first
    learned round only.
    Others (``RegressionReduction``, with its own Python loop, a
    ``BanditPipeline`` with Python feature maps, a learner fitted on named
    features) go through the general path: their own ``sample_actions`` and
    ``partial_fit`` on the row, with the same contract but their cost.

    Parameters
    ----------
    learner : estimator
        A fitted skbandit learner.

    Attributes
    ----------
    learner : estimator
        The learner the session is bound to.
    compiled : bool
        Whether the session plays the learner's compiled kernel (else its
        ``sample_actions`` and ``partial_fit``).
    n_acted : int
        Rows served by ``act`` in this session.
    n_learned : int
        Rounds learned by ``learn`` in this session.

    Examples
    --------
    >>> import numpy as np
    >>> from skbandit import Banditron, LiveSession
    >>> X = np.random.default_rng(0).normal(size=(20, 3))
    >>> y = np.arange(20) % 2
    >>> learner = Banditron(random_state=0).partial_fit(X, y, classes=[0, 1])
    >>> with LiveSession(learner) as session:
    ...     action, propensity = session.act(X[0])
    ...     session.learn(X[0], action, 1.0, propensity)
    >>> learner.t_
    21
    """

    def __init__(self, learner) -> None:
        check_is_fitted(learner, "classes_")
        open_session = learner.__dict__.get("_live_session")
        if open_session is not None:
            raise RuntimeError(
                f"{type(learner).__name__} already has an open LiveSession "
                f"({open_session!r}): close it first."
            )
        self.learner = learner
        self.compiled = _compiled_path(learner)
        self.n_acted = 0
        self.n_learned = 0
        self._inside = False
        self._closed = False
        self._warned = False
        classes = learner.classes_
        self._labels = list(classes)
        self._codes = {c: i for i, c in enumerate(classes.tolist())}
        self._binary = getattr(learner, "_logged_rewards", "binary") == "binary"
        self._d = int(learner.n_features_in_)
        if self.compiled:
            self._open_compiled(learner)
        learner._live_session = self

    def _open_compiled(self, learner) -> None:
        learner._validate_params()
        # (whether its analysis holds off-policy: a warning in ``learn``)
        self._off_policy_ok = learner._off_policy_ok
        # the generator as the session found it (``_rewind`` replays from it
        # a generator that cannot jump back)
        self._rng_state = learner._rng.bit_generator.state
        # a kernel of its own (a kept one's derived values would not see the
        # session's writes): the learner's is dropped now and at the close
        learner.__dict__.pop("_kernel_cache", None)
        learner._own_state_arrays()
        kernel, model_bytes = learner._make_kernel(), learner._model_bytes()
        journal = Journal(learner._journal_limit(model_bytes))
        kernel.set_journal(journal)
        self._round = LiveRound(
            kernel, journal, learner._rng.bit_generator, _MAX_ABS_X, self._binary
        )
        # rows served by ``sample_actions`` before the session: their pairs
        # are the first of the queue, served
        self._round.prefetch_pairs(learner.__dict__.get("_n_pending", 0))
        cls = type(learner)
        before = cls._before_block is not BaseBanditClassifier._before_block
        # a _before_block that settles runs on the first learned round only
        # (``_settling``, cleared when that round is committed), one that
        # does not around every round
        self._settling = before and before_block_settles(learner)
        self._before_every = before and not self._settling
        self._hooked = self._before_every or any(
            getattr(cls, name) is not getattr(BaseBanditClassifier, name)
            for name in HOOKS
        )
        # what a hooked round records to undo its hooks (``hook_plan``)
        hooked = self._hooked or self._settling
        self._plan = hook_plan(learner) if hooked else None
        # ... read from the instance dictionaries where that is getattr's read
        self._plan_dicts = None if self._plan is None else plain_dicts(*self._plan)
        self._row_hook = cls._check_rows is not InputValidationMixin._check_rows
        self._full_information = kernel.full_information

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<LiveSession on {type(self.learner).__name__}, {state}>"

    def __enter__(self) -> LiveSession:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # ------------------------------------------------------------------ rows
    def _bind_general(self, x) -> None:
        """Bind a row that is not in the common form (module docstring; the
        compiled ``bind`` refused it): validated by the learner
        (``_validate_X``, which converts it, runs the learner's row rule or
        raises the error naming its problem), then bound. A row in the common
        form is bound as it is by ``act`` and ``learn`` themselves, then
        checked by the learner's row rule when it has one."""
        X = x
        if not sp.issparse(x):
            X = np.asarray(x)
            if X.ndim == 1:
                X = X.reshape(1, -1)
        X = self.learner._validate_X(X, reset=False)
        if X.shape[0] != 1:
            raise ValueError(f"LiveSession: x must be one row; got {X.shape[0]} rows.")
        if sp.issparse(X):
            X = sp.csr_matrix(
                (X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)),
                shape=X.shape,
            )
        self._round.bind(X)

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("This LiveSession is closed.")

    # --------------------------------------------------------------- acting
    def act(self, x) -> tuple[Any, float]:
        """Draw an action for one row from the learner's exploration policy.

        Parameters
        ----------
        x : {array-like, sparse matrix} of shape (n_features,) or (1, n_features)
            The row (context).

        Returns
        -------
        action : object
            The drawn action, one of the learner's ``classes_``.
        propensity : float
            Its probability under the policy (the marginal probability, exact
            ties of the greedy label included): the propensity to log.
        """
        if self._closed:
            self._check_open()
        if not self.compiled:
            return self._act_general(x)
        live, learner = self._round, self.learner
        if not live.bind(x):  # (else bound as it is: the common form)
            self._bind_general(x)
        elif self._row_hook:
            learner._check_rows(x if x.ndim == 2 else x.reshape(1, -1))
        code = live.act(learner.t_ + live.served + 1)
        if code < 0:
            kernel = live.kernel
            try:
                learner._raise_kernel_status(kernel, _as_2d(x))
            finally:
                kernel.status = 0
        self.n_acted += 1
        return self._labels[code], live.propensity

    def _act_general(self, x):
        actions, propensities = self._call(self.learner.sample_actions, _as_2d(x))
        self.n_acted += 1
        return actions[0], float(propensities[0])

    # -------------------------------------------------------------- learning
    def learn(self, x, action, reward: float, propensity: float) -> None:
        """Learn the observed reward of ``action`` on row ``x``.

        Parameters
        ----------
        x : {array-like, sparse matrix} of shape (n_features,) or (1, n_features)
            The row (context) the action was played on.
        action : object
            The played action, one of the learner's ``classes_``.
        reward : float
            Its observed reward: 0 or 1 for a learner whose algorithm assumes
            the reward bit, in ``[0, 1]`` for the others.
        propensity : float
            The probability with which ``action`` was played, in
            ``[2**-32, 1]`` (``act``'s for the learner's own draws).
        """
        if self._closed:
            self._check_open()
        if not self.compiled:
            self._learn_general(x, action, reward, propensity)
            return
        code = self._check_feedback(action, reward, propensity)
        if self._full_information:
            raise TypeError(
                f"{type(self.learner).__name__} is a full-information learner: "
                "it learns from the true labels and cannot learn logged rewards."
            )
        live, learner = self._round, self.learner
        if not live.bind(x):  # (else bound as it is: the common form)
            self._bind_general(x)
        elif self._row_hook:
            learner._check_rows(x if x.ndim == 2 else x.reshape(1, -1))
        if self._hooked or self._settling:
            self._learn_hooked(x, code, reward, propensity)
        elif not live.learn(learner.t_ + 1, code, reward, propensity):
            self._fail(x, propensity)
        else:
            live.journal.commit()
        learner.t_ += 1
        learner.n_mistakes_ += live.wrong
        learner.n_greedy_mistakes_ += live.revealed
        self.n_learned += 1
        if not self._off_policy_ok and not live.own and not self._warned:
            self._warned = True
            warnings.warn(
                f"{type(learner).__name__}: a logged round was not drawn by the "
                "learner's own policy (action or propensity differ from its own "
                "draw); its analysis assumes on-policy data, so its update is "
                "used with the logged propensity without that guarantee (warned "
                "once per LiveSession; docs/logged.md).",
                OffPolicyWarning,
                stacklevel=_caller_stacklevel(),
            )

    def _learn_hooked(self, x, code: int, reward: float, propensity: float) -> None:
        """A round of a learner that overrides the block hooks: its rollback
        point, ``_before_block`` (which may replace the kernel;
        a hook that settles on the first learned round only), the round,
        ``_after_block``; on a failure the round is undone, the rollback point
        restored and the kernel the round started with played again (a kernel
        the hook made wraps the arrays the point replaced)."""
        learner = self.learner
        live = self._round
        # the rollback point: the attributes of the session's plan
        # (``hook_plan``: the counters and the hooks' stated rebinds, O(learners
        # held)), else the learner's whole rollback point (O(state attributes))
        plan = self._plan
        if plan is None:
            point = learner._rollback_point(rng=False)
        else:
            point = record_attributes(plan[0], plan[1], self._plan_dicts, _MISSING)
        started = live.kernel
        played = False
        try:
            if self._before_every or self._settling:
                live.forget()  # (the hook may change what ``act`` returns)
                kernel = learner._before_block(started, 1)
                if kernel is not started:
                    live.set_kernel(kernel)
            played = live.learn(learner.t_ + 1, code, reward, propensity)
            if not played:
                self._fail(x, propensity, restore=point)
            learner._after_block(live.kernel)
            live.journal.commit()
            self._settling = False
        except BaseException:
            if played:  # (else ``_fail`` undid it)
                live.unlearn()
                self._restore(point)
            if live.kernel is not started:
                live.set_kernel(started)
            raise

    def _restore(self, point) -> None:
        plan = self._plan
        if plan is None:
            self.learner._restore_point(point)
            return
        for obj, name, value in zip(*plan, point, strict=True):
            if value is _MISSING:
                obj.__dict__.pop(name, None)
            else:
                setattr(obj, name, value)

    def _fail(self, x, propensity: float, restore=None) -> None:
        """Undo the failed round and raise its error."""
        live = self._round
        kernel = live.kernel
        status = kernel.status
        live.unlearn()
        if restore is not None:
            self._restore(restore)
        learner = self.learner
        X = _as_2d(x)
        if status == STATUS_NONFINITE:
            rows = np.zeros(1, dtype=np.intp)
            learner._raise_weight_overflow(X, _OneRound(propensity), rows)
        learner._raise_kernel_status(kernel, X, status=status)

    def _check_feedback(self, action, reward, propensity) -> int:
        """The code of ``action`` after checking the feedback (class docstring)."""
        # a NumPy scalar finds its Python twin's entry (equal hash and value);
        # anything else that has one (a one-element array) by ``item()``
        codes = self._codes
        try:
            code = codes.get(action)
        except TypeError:  # unhashable
            code = None
        if code is None and hasattr(action, "item"):
            try:
                code = codes.get(action.item())
            except TypeError:
                code = None
        if code is None:
            raise ValueError(
                f"LiveSession: action {action!r} is not one of the learner's "
                f"classes_ {self.learner.classes_.tolist()[:20]}."
            )
        r = float(reward)
        if self._binary:
            if not (r == 0.0 or r == 1.0):
                raise ValueError(
                    f"{type(self.learner).__name__} learns from rewards 0 or 1 "
                    f"(its algorithm assumes the bit 1[action == label]); got "
                    f"reward {reward!r}."
                )
        elif not 0.0 <= r <= 1.0:
            raise ValueError(
                f"{type(self.learner).__name__} learns from rewards in [0, 1]; "
                f"got reward {reward!r}."
            )
        p = float(propensity)
        if not _MIN_PROPENSITY <= p <= 1.0:
            raise ValueError(
                f"LiveSession: propensity must be in [{_MIN_PROPENSITY:.3g}, 1] "
                f"(a probability, above LoggedFeedback's floor 2**-32); got "
                f"{propensity!r}."
            )
        return code

    def _learn_general(self, x, action, reward, propensity) -> None:
        logged = LoggedFeedback([action], [reward], [propensity])
        self._call(self.learner.partial_fit, _as_2d(x), logged)
        self.n_learned += 1

    def _call(self, method, *args):
        """Call one of the learner's locked methods on the session's behalf."""
        self._inside = True
        try:
            return method(*args)
        finally:
            self._inside = False

    # --------------------------------------------------------------- closing
    def close(self) -> None:
        """Close the session: the generator set back by the pairs of rows
        served and not learned (they stay served: ``n_pending_``), the
        counters up to date, the learner unlocked. Closing twice is a no-op."""
        if self._closed:
            return
        self._closed = True
        learner = self.learner
        try:
            if self.compiled:
                live = self._round
                live.kernel.set_journal(None)
                _rewind(learner, live.queued, self._rng_state, self.n_learned)
                learner._n_pending = live.served
                if self.n_learned:
                    learner.n_iter_ = 1
        finally:
            learner.__dict__.pop("_kernel_cache", None)
            learner.__dict__.pop("_live_session", None)


class _OneRound:
    """The propensity of one logged round, as ``_raise_weight_overflow`` reads
    the propensities of a pass."""

    __slots__ = ("propensities",)

    def __init__(self, propensity: float) -> None:
        self.propensities = np.array([propensity])


_MIN_PROPENSITY = MIN_PROPENSITY
STATUS_NONFINITE = int(KernelStatus.STATUS_NONFINITE)


def _as_2d(x):
    """``x`` as a 2-D row (a view for an array)."""
    if sp.issparse(x):
        return x
    x = np.asarray(x)
    return x.reshape(1, -1) if x.ndim == 1 else x


def _rewind(learner, n_pairs: int, opened: dict, n_consumed: int) -> None:
    """Set the learner's generator back by ``n_pairs`` uniform pairs
    (``2 n_pairs`` doubles, one 64-bit draw each): ``PCG64.advance`` by the
    negative count for a ``PCG64`` (exact: its state is a 128-bit linear
    congruential generator, advanced modulo 2**128), keeping its buffered
    32-bit word; another bit generator is set back to its state ``opened``
    when the session opened, then advanced by the ``n_consumed`` pairs the
    learned rounds consumed (O(rounds of the session), at close only)."""
    if n_pairs == 0:
        return
    rng = learner._rng
    bit_generator = rng.bit_generator
    if type(bit_generator) is np.random.PCG64:
        state = bit_generator.state
        bit_generator.advance(-2 * n_pairs)
        moved = bit_generator.state
        moved["has_uint32"] = state["has_uint32"]
        moved["uinteger"] = state["uinteger"]
        bit_generator.state = moved
        return
    bit_generator.state = opened
    rng.random(2 * n_consumed)
