"""Feature maps in front of a bandit learner, online: ``BanditPipeline``.

scikit-learn's ``Pipeline`` has no ``partial_fit``; a bandit learner needs one,
and needs its representation to be a function of the contexts alone (a
context is seen before its feedback, so a map that learns from contexts never
sees a label). ``BanditPipeline`` chains such maps and a skbandit learner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.base import clone
from sklearn.kernel_approximation import RBFSampler
from sklearn.utils import Bunch, check_random_state
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.validation import check_is_fitted, validate_data

from skbandit._compiled_maps import _sampler_parts, _tail_parts
from skbandit._core._drivers import run_scores
from skbandit._core._feature_map import FeatureMapKernel
from skbandit._docstring import ROUND_COUNTS, fill_doc
from skbandit.base import BaseBanditClassifier, _kernel_arrays
from skbandit.preprocessing import OnlineStandardScaler

if TYPE_CHECKING:
    from skbandit._typing import RandomStateLike

__all__ = ["BanditPipeline"]


def default_steps() -> list[tuple[str, Any]]:
    """The steps ``BanditPipeline(steps=None)`` runs: running standardisation,
    1,000 random Fourier features of the Gaussian kernel with ``gamma = 1 /
    d`` (``RBFSampler(gamma="scale")`` after the scaler, see
    ``BanditPipeline``), ``SquareCB()``."""
    from skbandit.linear_model import SquareCB

    return [
        ("onlinestandardscaler", OnlineStandardScaler()),
        ("rbfsampler", RBFSampler(gamma="scale", n_components=1000)),
        ("squarecb", SquareCB()),
    ]


def _check_steps(steps) -> list[tuple[str, Any]]:
    """The steps as (name, estimator) pairs, checked (clear errors)."""
    if steps is None:
        return default_steps()
    if not isinstance(steps, list | tuple) or not steps:
        raise InvalidParameterError(
            "The 'steps' parameter of BanditPipeline must be a non-empty list of "
            f"(name, estimator) pairs or None; got {steps!r}."
        )
    pairs = []
    for i, step in enumerate(steps):
        if not (isinstance(step, tuple | list) and len(step) == 2):
            raise InvalidParameterError(
                f"steps[{i}] of BanditPipeline must be a (name, estimator) pair; "
                f"got {step!r}."
            )
        name, est = step
        if not isinstance(name, str) or not name or "__" in name:
            raise InvalidParameterError(
                f"steps[{i}] of BanditPipeline: the name must be a non-empty "
                f"string without '__'; got {name!r}."
            )
        pairs.append((name, est))
    names = [n for n, _ in pairs]
    if len(set(names)) != len(names):
        raise InvalidParameterError(
            f"The step names of BanditPipeline must be unique; got {names}."
        )
    clash = set(names) & set(BanditPipeline._parameter_constraints)
    if clash:
        raise InvalidParameterError(
            f"Step names of BanditPipeline conflict with its parameters: "
            f"{sorted(clash)}."
        )
    final = pairs[-1][1]
    if not isinstance(final, BaseBanditClassifier):
        raise InvalidParameterError(
            "The final step of BanditPipeline must be a skbandit bandit learner "
            f"(a BaseBanditClassifier); got {type(final).__name__}."
        )
    for i, (name, est) in enumerate(pairs[:-1]):
        if isinstance(est, BaseBanditClassifier):
            raise InvalidParameterError(
                f"Step {name!r} of BanditPipeline is a bandit learner: only the "
                "final step may be one."
            )
        if not (hasattr(est, "fit") and hasattr(est, "transform")):
            raise InvalidParameterError(
                f"Step {name!r} of BanditPipeline (steps[{i}]) must be a "
                f"transformer (fit and transform); got {type(est).__name__}."
            )
    _split(pairs)  # the order of the online transformers
    return pairs


def _split(pairs) -> tuple[int, bool, bool]:
    """``(h, scaler, rff)``: the transforms ``pairs[:h]`` run in Python (maps
    fixed or fitted on the first contexts), the rest in the compiled kernel:
    an ``OnlineStandardScaler`` (``scaler``), then an ``RBFSampler`` or the
    ``FeatureUnion`` of the row and one (``rff``, ``_sampler_parts``), each
    optional."""
    transforms = [est for _, est in pairs[:-1]]
    h = len(transforms)
    rff = h > 0 and _sampler_parts(transforms[h - 1]) is not None
    if rff:
        h -= 1
    scaler = h > 0 and isinstance(transforms[h - 1], OnlineStandardScaler)
    if scaler:
        h -= 1
    for i, est in enumerate(transforms[:h]):
        if isinstance(est, OnlineStandardScaler):
            raise InvalidParameterError(
                f"Step {pairs[i][0]!r} of BanditPipeline is an OnlineStandardScaler "
                "followed by a map other than one RBFSampler: an online "
                "transformer runs in the compiled kernel, after the maps fixed "
                "or fitted on the first contexts (put it after them), and "
                "only an RBFSampler, or a FeatureUnion of 'passthrough' then "
                "one RBFSampler, may follow it."
            )
    return h, scaler, rff


@fill_doc(round_counts=ROUND_COUNTS)
class BanditPipeline(BaseBanditClassifier):
    r"""Feature maps, then a skbandit bandit learner, learning online.

    Each row ``x`` is mapped to features ``z`` and the final step, a skbandit
    learner, plays and learns on ``z``; everything the learner offers
    (``partial_fit`` with labels, a ``BanditFeedback`` or ``LoggedFeedback``,
    ``sample_actions``, ``exploration_distribution``, ``predict``,
    ``decision_function``, ``fit``, pickling mid-stream, rollback on failure)
    works on the pipeline, with the pipeline's generator drawing the uniforms.
    The maps read contexts only, never a label or a reward.

    Three kinds of step come before the learner:

    * **fixed maps**: ``RBFSampler``, ``PolynomialFeatures``,
      ``FeatureHasher``, ``HashingVectorizer``, ... (any transformer; its
      ``fit`` is called once, see below);
    * **maps fitted on the first contexts**: ``Nystroem``, ``SplineTransformer``
      (knots from the data), ... — fitted once, on *the rows of the call
      that starts the stream* (the first ``partial_fit``, ``fit``'s rows, or a
      first ``sample_actions``), never refitted. The chunking of that first
      call therefore matters for such a step (``Nystroem(n_components=100)``
      fitted on a first chunk of 10 rows has 10 components); everything
      after it does not;
    * **a transformer updated online**: ``OnlineStandardScaler``. Row ``t``
      is scaled with the statistics of the rows learnt before it (rows ``1 ..
      t-1``), which take row ``t`` once it is learnt; so ``partial_fit`` in
      chunks equals one call bit for bit, ``sample_actions`` and ``predict``
      change nothing, and a row is scaled alike when it is served and when its
      logged feedback is learnt.

    The steps run in two places. The maps fixed or fitted on the first
    contexts run in Python on each call's rows (``transform``), in order; the
    last steps, an ``OnlineStandardScaler`` then an ``RBFSampler`` (each
    optional), run in the compiled kernel, row by row (``FeatureMapKernel``
    of ``skbandit._core._feature_map``): ``u_c = (x_c - m_c) / s_c`` with
    Welford's running mean ``m_c`` and standard deviation ``s_c`` (1 for a
    constant feature and before any row), then ``z = sqrt(2 / D) cos(Ω^T u +
    b)`` with the fitted sampler's ``Ω = random_weights_`` and ``b =
    random_offset_`` (Rahimi and Recht 2007), the sum over ``c`` taken in
    order and ``cos`` fdlibm's reduction and polynomials (Cody-Waite
    reduction by ``pi/2``, the ``__kernel_cos``/``__kernel_sin`` minimax
    coefficients, evaluated without branches so the loop over the features
    vectorises; within ``3e-16`` of the C library's ``cos``, which takes
    arguments beyond ``2^19 pi``): the features equal scikit-learn's
    ``RBFSampler.transform`` of ``u`` to about 1e-15 (NumPy's product and
    cosine may differ in the last bits). In place of the ``RBFSampler``,
    scikit-learn's ``FeatureUnion([(a, "passthrough"), (b, RBFSampler(...))])``
    runs in the kernel too: the row beside its random features, ``z = (w_a
    u, w_b sqrt(2 / D) cos(Ω^T u + b))`` with the union's
    ``transformer_weights`` ``w_a``, ``w_b`` (1 when absent; finite numbers),
    as its ``transform`` computes them; its ``RBFSampler``'s ``random_state``
    left None is drawn from ``random_state`` as a step's own. An
    ``OnlineStandardScaler`` must therefore come after the Python maps and be
    followed by at most one ``RBFSampler`` or such a union. A pipeline whose
    maps all run in the kernel (e.g. ``[OnlineStandardScaler, RBFSampler,
    learner]`` or ``[RBFSampler, learner]``) can be a candidate of
    ``OnlineSelector``, which runs its candidates' kernels on the same row.

    An ``RBFSampler(gamma="scale")`` run after an ``OnlineStandardScaler`` is
    fitted with ``gamma = 1 / d`` (the value "scale" gives unit-variance
    features); elsewhere "scale" is fitted on the first contexts.

    The steps given are cloned at the start of a stream (``steps_``); a
    step's ``random_state`` left None is then drawn from ``random_state``
    (the pipeline is deterministic under a fixed seed). The final learner's
    own generator, ``max_iter`` and ``shuffle`` are not used: the pipeline's
    are.

    Cost per round of the compiled maps: ``O(d)`` for the scaler, ``O(D
    nnz(u))`` multiply-adds and ``D`` cosines for the random features, then
    the learner's round on ``D`` dense features, ``D + d`` with the union
    (``benchmarks/bench_feature_maps.py`` measures it).

    Parameters
    ----------
    steps : list of (str, estimator) pairs, default=None
        The transformers, then a skbandit bandit learner (the final step).
        ``None``: ``[("onlinestandardscaler", OnlineStandardScaler()),
        ("rbfsampler", RBFSampler(gamma="scale", n_components=1000)),
        ("squarecb", SquareCB())]``.
    max_iter : int, default=5
        Passes over the data in ``fit``. ``partial_fit`` always makes one.
    shuffle : bool, default=True
        Whether ``fit`` visits the rows in a new random order each pass.
    random_state : int, RandomState instance or None, default=None
        Seeds the pipeline's generator (the uniforms of every round) and the
        steps' ``random_state`` left None.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels, sorted.
    steps_ : list of (str, estimator) pairs
        The fitted steps (clones of ``steps``).
    learner_ : skbandit learner
        The fitted final step, in the state it would have after learning the
        mapped rows itself.
    scaler_mean_ : ndarray of shape (n_features_scaled,)
        Running means of the compiled ``OnlineStandardScaler`` (empty
        without one).
    scaler_var_sum_ : ndarray of shape (n_features_scaled,)
        Running sums of squared deviations of that scaler.
    scaler_count_ : ndarray of shape (1,)
        Rows taken into that scaler's statistics (int64).
    n_features_in_ : int
        Number of features seen during fit (not set when the first step
        takes other input, e.g. ``HashingVectorizer``).
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit (string column names only).
    {round_counts}

    See Also
    --------
    skbandit.pipeline.make_bandit_pipeline : Names the steps.
    skbandit.preprocessing.OnlineStandardScaler : The online scaler.

    References
    ----------
    A. Rahimi and B. Recht, "Random features for large-scale kernel machines",
    NeurIPS 2007.

    B. P. Welford, "Note on a method for calculating corrected sums of squares
    and products", Technometrics 4(3), 1962.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.kernel_approximation import RBFSampler
    >>> from skbandit import SquareCB
    >>> from skbandit.pipeline import make_bandit_pipeline
    >>> from skbandit.preprocessing import OnlineStandardScaler
    >>> X, y = load_digits(return_X_y=True)
    >>> pipe = make_bandit_pipeline(
    ...     OnlineStandardScaler(), RBFSampler(n_components=300, gamma="scale"),
    ...     SquareCB(), random_state=0)
    >>> pipe = pipe.partial_fit(X, y, classes=range(10))
    >>> pipe.t_, pipe.learner_.coef_.shape
    (1797, (10, 300))
    """

    _parameter_constraints: dict = {
        **BaseBanditClassifier._parameter_constraints,
        "steps": [list, tuple, None],
    }

    _state_attrs = ("scaler_mean_", "scaler_var_sum_", "scaler_count_")
    # the hooks write the learner's counter t_ and run its hooks; the
    # counter _before_block sets is the one _after_block keeps in step (and a
    # failed live round restores both): settled when the learner's hook is
    _hook_rebinds = ()
    _before_block_settles = True

    def __init__(
        self,
        steps: list | None = None,
        *,
        max_iter: int = 5,
        shuffle: bool = True,
        random_state: RandomStateLike = None,
    ) -> None:
        super().__init__(max_iter=max_iter, shuffle=shuffle, random_state=random_state)
        self.steps = steps

    # ----------------------------------------------------------- parameters
    def get_params(self, deep: bool = True) -> dict:
        """Parameters of the pipeline and, with ``deep``, of each step
        (``name`` and ``name__param``), as scikit-learn's ``Pipeline``."""
        out = super().get_params(deep=False)
        if not deep:
            return out
        steps = self.steps
        if isinstance(steps, list | tuple):
            for step in steps:
                if isinstance(step, tuple | list) and len(step) == 2:
                    name, est = step
                    out[name] = est
                    if hasattr(est, "get_params"):
                        for key, value in est.get_params(deep=True).items():
                            out[f"{name}__{key}"] = value
        return out

    def set_params(self, **params):
        """Set parameters; a step's name replaces that step, ``name__param``
        sets the step's parameter (as scikit-learn's ``Pipeline``)."""
        if "steps" in params:
            self.steps = params.pop("steps")
        steps = self.steps
        names = (
            [s[0] for s in steps if isinstance(s, tuple | list) and len(s) == 2]
            if isinstance(steps, list | tuple)
            else []
        )
        replaced = {k: params.pop(k) for k in list(params) if k in names}
        if replaced:
            self.steps = [(n, replaced.get(n, est)) for n, est in steps]
        if params:
            super().set_params(**params)
        return self

    def _validate_params(self) -> None:
        super()._validate_params()
        for _, est in _check_steps(self.steps)[-1:]:
            est._validate_params()

    @property
    def named_steps(self) -> Bunch:
        """The steps given, by name (``steps=None``: the default steps)."""
        return Bunch(**dict(_check_steps(self.steps)))

    @property
    def learner_(self) -> BaseBanditClassifier:
        """The fitted final step."""
        check_is_fitted(self, "steps_")
        learner = self.steps_[-1][1]
        if "t_" in self.__dict__:
            learner.t_ = self.t_  # (the mirror, see ``_before_block``)
        return learner

    @property
    def _logged_rewards(self) -> str:  # type: ignore[override]  # the learner's
        learner = self.__dict__.get("steps_", None) or _check_steps(self.steps)
        return learner[-1][1]._logged_rewards

    @property
    def _off_policy_ok(self) -> bool:  # type: ignore[override]  # the learner's
        learner = self.__dict__.get("steps_", None) or _check_steps(self.steps)
        return learner[-1][1]._off_policy_ok

    def _check_selector_candidate(self, index: int) -> None:
        """Refuse to be a selector's candidate unless every map is compiled."""
        pairs = _check_steps(self.steps)
        h = _split(pairs)[0]
        if h:
            names = [type(est).__name__ for _, est in pairs[:h]]
            raise InvalidParameterError(
                f"candidates[{index}] is a BanditPipeline whose steps {names} "
                "run in Python: OnlineSelector runs its candidates' compiled "
                "kernels, and only an OnlineStandardScaler and an RBFSampler "
                "or a FeatureUnion of 'passthrough' then one RBFSampler (in "
                "that order, each optional) have a compiled path."
            )

    # ---------------------------------------------------------------- steps
    def _new_steps(self) -> list[tuple[str, Any]]:
        """Clones of the steps, their unset ``random_state`` drawn from the
        pipeline's."""
        pairs = [(n, clone(e)) for n, e in _check_steps(self.steps)]
        if self.random_state is not None:
            seeds = check_random_state(self.random_state)
            for _, step in pairs[:-1]:
                # and a FeatureUnion's transformers (the union has no seed)
                inner = [e for _, e in getattr(step, "transformer_list", [])]
                for est in [step, *inner]:
                    if not hasattr(est, "get_params"):  # "passthrough", "drop"
                        continue
                    params = est.get_params(deep=False)
                    if "random_state" in params and params["random_state"] is None:
                        seed = int(seeds.randint(np.iinfo(np.int32).max))
                        est.set_params(random_state=seed)
        return pairs

    def _start_tail(self, pairs, rows, d: int) -> None:
        """Fit the compiled sampler at the start: after a scaler, on its width
        ``d`` only (``gamma="scale"`` is then ``1 / d``); otherwise on its
        input ``rows`` (None: only the width is known, as for a selector's
        candidate, and ``gamma`` must be a number)."""
        h, scaler, rff = _split(pairs)
        if not rff:
            return
        tail = pairs[-2][1]
        rbf = _tail_parts(pairs)[0]
        if scaler and rbf.gamma == "scale":
            rbf.set_params(gamma=1.0 / d)
        if rows is None or scaler:
            if rbf.gamma == "scale":
                raise InvalidParameterError(
                    "RBFSampler(gamma='scale') needs the first contexts, which "
                    "a selector's candidate is not given: give gamma a number "
                    "or put an OnlineStandardScaler before it."
                )
            rows = np.zeros((1, d))
        tail.fit(rows)  # a union fits its sampler in place

    def _validate_X(self, X, *, reset: bool):
        pairs = self._new_steps() if reset else self.steps_
        h = _split(pairs)[0]
        if not h:
            rows = super()._validate_X(X, reset=reset)
        else:
            # Python maps: the raw input's width and names, then the maps
            if pairs[0][1].__sklearn_tags__().input_tags.two_d_array:
                validate_data(self, X, reset=reset, skip_check_array=True)
            Z = X
            for _, est in pairs[:h]:
                Z = est.fit_transform(Z) if reset else est.transform(Z)
            rows = self._mapped_rows(Z)
            if not reset and rows.shape[1] != self._tail_width_in:
                raise ValueError(
                    f"The Python maps of BanditPipeline gave {rows.shape[1]} "
                    f"features, {self._tail_width_in} at the start of the stream."
                )
        if reset:
            self._start_tail(pairs, rows, rows.shape[1])
            self._start_steps = pairs
        return rows

    def _mapped_rows(self, Z):
        """The Python maps' output in the common row form (float64, canonical
        CSR, finite, bounded: the skeleton's validation) without changing the
        raw input's width and names, which that validation would reset."""
        names = ("n_features_in_", "feature_names_in_")
        saved = {k: self.__dict__[k] for k in names if k in self.__dict__}
        try:
            return super()._validate_X(Z, reset=True)
        finally:
            for k in names:
                self.__dict__.pop(k, None)
            self.__dict__.update(saved)

    # ---------------------------------------------------------------- state
    def _init_state(self, n_features, n_classes):
        pairs = self.__dict__.pop("_start_steps", None)
        if pairs is None:
            # started without rows (a selector's candidate): compiled maps only
            pairs = self._new_steps()
            self._start_tail(pairs, None, n_features)
        h, scaler, rff = _split(pairs)
        n_out = n_features
        if rff:
            rbf, passthrough = _tail_parts(pairs)[:2]
            n_out = rbf.n_components + (n_features if passthrough else 0)
        learner = pairs[-1][1]
        learner.n_features_in_ = n_out
        learner._reset(self.classes_, n_out)
        # the pipeline's uniforms drive the learner: its generator is fixed
        learner._rng = np.random.default_rng(0)
        learner.n_iter_ = 0
        self.steps_ = pairs
        self._tail_width_in = n_features
        d = n_features if scaler else 0
        self.scaler_mean_ = np.zeros(d, dtype=np.float64)
        self.scaler_var_sum_ = np.zeros(d, dtype=np.float64)
        self.scaler_count_ = np.zeros(1, dtype=np.int64)

    def _get_state(self) -> dict:
        state = super()._get_state()
        state["learner_"] = self.learner_._get_state()
        return state

    def _set_state(self, state: dict) -> None:
        state = dict(state)
        self.learner_._set_state(state.pop("learner_"))
        super()._set_state(state)

    def _own_state_arrays(self) -> None:
        super()._own_state_arrays()
        self.learner_._own_state_arrays()

    # --------------------------------------------------------------- kernel
    def _make_kernel(self):
        return self._wrap(self.learner_._make_kernel())

    def _wrap(self, inner):
        """The learner's kernel behind the compiled maps (itself if none)."""
        pairs = self.steps_
        h, scaler, rff = _split(pairs)
        if not (scaler or rff):
            return inner
        kwargs: dict[str, Any] = {}
        if scaler:
            est = pairs[h][1]
            kwargs.update(
                standardise=True,
                with_mean=bool(est.with_mean),
                with_std=bool(est.with_std),
                mean=self.scaler_mean_,
                m2=self.scaler_var_sum_,
                count=self.scaler_count_,
            )
        if rff:
            rbf, passthrough, w_lin, w_rff = _tail_parts(pairs)
            kwargs.update(
                omega=np.ascontiguousarray(rbf.random_weights_, dtype=np.float64),
                offset=np.ascontiguousarray(rbf.random_offset_, dtype=np.float64),
                passthrough=passthrough,
                passthrough_weight=w_lin,
                rff_weight=w_rff,
            )
        kernel = FeatureMapKernel(inner, self._tail_width_in, **kwargs)
        kernel.owner = pairs[-1][1]
        return kernel

    def _before_block(self, kernel, n_rows):
        inner = kernel.inner if isinstance(kernel, FeatureMapKernel) else kernel
        learner = self.steps_[-1][1]
        # the learner's round counter mirrors the pipeline's (a selector
        # counts a candidate's rounds on the candidate, not on its learner)
        learner.t_ = self.t_
        replaced = learner._before_block(inner, n_rows)
        if replaced is not inner:
            kernel = self._wrap(replaced)
        return kernel

    def _after_block(self, kernel) -> None:
        # the learner from the kernel when it is a map's (as the selector's
        # hook reads its candidates from its kernel)
        if isinstance(kernel, FeatureMapKernel):
            inner, learner = kernel.inner, kernel.owner
        else:
            inner, learner = kernel, self.steps_[-1][1]
        learner._after_block(inner)
        learner.t_ += kernel.rows_played

    def _score_rows(self, X):
        self._own_state_arrays()
        out = np.empty((X.shape[0], self.classes_.shape[0]), dtype=np.float64)
        run_scores(self._make_kernel(), *_kernel_arrays(X), self.t_ + 1, out)
        return out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        try:
            pairs = _check_steps(self.steps)
        except InvalidParameterError:
            return tags
        if _split(pairs)[0]:
            first = pairs[0][1].__sklearn_tags__().input_tags
            tags.input_tags.sparse = first.sparse
            tags.input_tags.two_d_array = first.two_d_array
            tags.input_tags.string = first.string
            tags.input_tags.dict = first.dict
        return tags
