"""Input validation and label encoding (``InputValidationMixin``).

Input
-----
``_validate_X`` gives every kernel one row form (``skbandit._base._rows``), on
every path (``fit``, ``partial_fit``, logged feedback, ``sample_actions``,
``predict``, ``decision_function``, ``exploration_distribution``): float64,
finite, every ``|x_ij| <= _MAX_ABS_X``, and CSR rows canonical (duplicate
columns summed, indices sorted) in C-contiguous arrays (the caller's matrix is
copied only when it is not canonical or an array is a strided view, never
modified). Rows a fitted learner receives already in that form (a float64
C-ordered 2-D array, or a canonical CSR matrix with float64 values, of the
fitted width) are recognised by O(1) checks and compiled scans
(``_rows._common_form``) and accepted as they are; everything else goes through
scikit-learn's ``validate_data``. A learner's own row rule is the hook
``_check_rows``, which every path runs. The parameters of a fitted learner are
validated again only when one was replaced (``_validate_params_cached``).

Labels and actions
------------------
The classes are sorted and distinct (``_check_classes``; at least two), given
on the first call and the same afterwards (``_check_same_classes``); labels
and logged actions are encoded as their index in ``classes_``
(``BanditFeedback._encode``, ``_check_logged``; one label or action by a
dictionary look-up, ``_scalar_code``; integer labels of integer classes that
span few values by a look-up table, ``skbandit.feedback._table_codes``).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_consistent_length, validate_data

from skbandit._base._checks import same_entries
from skbandit._base._rows import (
    _canonical_csr,
    _check_magnitude,
    _check_sparse_structure,
    _common_form,
)
from skbandit.feedback import BanditFeedback, LoggedFeedback, _check_label_values

#: the error of a first ``partial_fit`` without ``classes``
PARTIAL_FIT_NEEDS_CLASSES = (
    "classes must be passed on the first call to partial_fit "
    "(the learner must know every possible action up front)."
)


def _check_classes(classes) -> np.ndarray:
    """The classes, sorted and distinct (``np.unique``); at least two.

    ``classes`` must be one-dimensional (a nested list or 2-D array is refused,
    not flattened) and hold values that can be labels: no NaN, infinity,
    complex number or None (``skbandit.feedback._check_label_values``), nor
    values that cannot be sorted together. ``ValueError`` naming the problem
    otherwise. Every path that takes ``classes`` (``fit``, ``partial_fit``,
    ``sample_actions``, logged feedback) checks them here before changing
    anything."""
    try:
        classes = np.asarray(classes)
    except ValueError as exc:  # ragged nesting
        raise ValueError(
            f"classes must be a 1-D array-like of class labels: {exc}"
        ) from None
    if classes.ndim != 1:
        raise ValueError(
            "classes must be a 1-D array-like of class labels; got an array of "
            f"shape {classes.shape}."
        )
    _check_label_values(classes, "classes")
    try:
        classes = np.unique(classes)
    except TypeError as exc:
        raise ValueError(
            f"classes must be labels of one comparable type (numbers, or "
            f"strings); got {classes[:10].tolist()}: {exc}"
        ) from None
    if classes.shape[0] < 2:
        n = classes.shape[0]
        raise ValueError(
            f"A bandit learner needs at least 2 classes; got {n} "
            f"class{'' if n == 1 else 'es'}: {classes.tolist()}."
        )
    return classes


@functools.lru_cache(maxsize=4096)
def _one_code(code: int) -> np.ndarray:
    """``np.array([code], dtype=np.int32)``, read-only and cached: the codes
    argument of a one-row call (the kernels only read it)."""
    codes = np.array([code], dtype=np.int32)
    codes.flags.writeable = False
    return codes


class InputValidationMixin:
    """Validation of rows, parameters, classes, labels and logged actions."""

    if TYPE_CHECKING:  # what it uses of the skeleton (skbandit.base)
        _parameter_constraints: dict
        _logged_rewards: str
        classes_: np.ndarray

        def _validate_params(self) -> None: ...

    # ------------------------------------------------------------------ rows
    def _validate_X(self, X, *, reset: bool):
        """Validated rows: float64, C-ordered or canonical CSR, finite, within
        the magnitude bound (module docstring, Input). A learner adding checks
        overrides this and calls it first."""
        if (
            not reset
            and "feature_names_in_" not in self.__dict__
            and _common_form(X, getattr(self, "n_features_in_", -1))
        ):
            # already in the common form (no feature names to check)
            self._check_rows(X)
            return X
        original, checked, canonical = X, None, None
        if sp.issparse(X):
            canonical = _check_sparse_structure(X)
            checked = getattr(X, "indices", None)
        X = validate_data(
            self,
            X,
            reset=reset,
            accept_sparse="csr",
            accept_large_sparse=True,
            dtype=np.float64,
            order="C",
            # NaN and infinities: refused by _check_magnitude's bound (with
            # scikit-learn's messages), one scan of the values instead of two
            ensure_all_finite=False,
        )
        if sp.issparse(X):
            if X.indices is not checked:
                # A conversion from another format produced new CSR arrays.
                canonical = _check_sparse_structure(X)
            X = _canonical_csr(self, X, original, canonical)
            if not (
                X.data.flags.c_contiguous
                and X.indices.flags.c_contiguous
                and X.indptr.flags.c_contiguous
            ):
                # strided views of the caller's arrays (scikit-learn keeps
                # them): the kernels read contiguous arrays, so copy them
                X = X.copy()
        _check_magnitude(self, X)
        self._check_rows(X)
        return X

    def _check_rows(self, X) -> None:
        """A learner's own checks of rows already in the common form (float64,
        C-ordered or canonical CSR, finite, within the magnitude bound); raise
        ``ValueError`` to refuse them. Run on every path (rows accepted in the
        common form included) and by ``LiveSession`` on every row; the default
        accepts every row."""

    def _validate_fit_input(self, X, y, *, reset: bool):
        # Plain labels are wrapped in a feedback object whose log nobody reads:
        # it is not kept.
        record = isinstance(y, BanditFeedback)
        feedback = y if record else BanditFeedback(y)
        X = self._validate_X(X, reset=reset)
        check_consistent_length(X, feedback)
        return X, feedback, record

    def _validate_params_cached(self) -> None:
        """``_validate_params``, skipped when every parameter is the object it
        was at the last validation (compared by identity, ``is``); the key is
        dropped by ``set_params`` (which may change a nested object's
        parameters in place) and is not pickled."""
        d = self.__dict__
        names = tuple(self._parameter_constraints)
        if same_entries(d, names, d.get("_validated_params")):
            return
        values = tuple([d.get(name) for name in names])
        self._validate_params()
        self._validated_params = values

    # ------------------------------------- classes, labels and logged actions
    def _one_label_code(self, y):
        """The code of ``y`` when it is one plain label of ``classes_`` (a list
        or 1-D array of length 1: a dictionary look-up), else None (``y`` is
        then validated and encoded as a ``BanditFeedback``, which raises the
        usual errors)."""
        if type(y) is np.ndarray:
            if y.ndim == 1 and y.shape[0] == 1:
                return self._scalar_code(y.item(0), self.classes_)
        elif type(y) is list and len(y) == 1:
            return self._scalar_code(y[0], self.classes_)
        return None

    def _classes_of_call(
        self, classes, first_call: bool, *, missing: str, where: str
    ) -> np.ndarray:
        """The classes a call plays with, by the first-call rule.

        On the first call ``classes`` is required (else ``ValueError(missing)``)
        and checked; on a later call it is optional and, when given, must be
        ``classes_`` (``_check_same_classes`` with ``where``), which are
        returned.
        """
        if first_call:
            if classes is None:
                raise ValueError(missing)
            return _check_classes(classes)
        if classes is not None:
            self._check_same_classes(classes, where)
        return self.classes_

    def _check_same_classes(self, classes, where: str) -> np.ndarray:
        """``classes`` passed again after the first call: they must be
        ``classes_``."""
        new_classes = _check_classes(classes)
        if not np.array_equal(new_classes, self.classes_):
            raise ValueError(
                f"classes={new_classes.tolist()} is not the same as on "
                f"{where}, was: {self.classes_.tolist()}"
            )
        return new_classes

    def _scalar_code(self, action, classes: np.ndarray):
        """The code of one action (the single-row path), or None if unknown."""
        table = self.__dict__.get("_code_table")
        if table is None or table[0] is not classes:
            table = (classes, {c: i for i, c in enumerate(classes.tolist())})
            if classes is self.__dict__.get("classes_"):
                self._code_table = table
        try:
            code = table[1].get(action.item() if hasattr(action, "item") else action)
        except TypeError:  # unhashable
            return None
        # a dict matches 1 == 1.0 == True; the array path's comparison agrees
        return code

    def _check_logged(self, logged: LoggedFeedback, classes: np.ndarray):
        """Codes of the logged actions and the rewards, checked for this learner."""
        actions = logged.actions
        if actions.shape[0] == 1:
            code = self._scalar_code(actions.item(0), classes)
            r = logged.rewards.item(0)
            if code is not None and (
                r == 0.0
                or r == 1.0
                or (self._logged_rewards != "binary" and 0.0 < r < 1.0)
            ):
                return _one_code(code)
            # otherwise the array path below raises the error
        k = classes.shape[0]
        try:
            codes = np.minimum(np.searchsorted(classes, actions), k - 1)
            known = classes[codes] == actions
        except TypeError as exc:
            raise ValueError(
                f"LoggedFeedback: actions of type {actions.dtype} cannot be "
                f"compared with classes of type {classes.dtype}: {exc}"
            ) from None
        if not np.all(known):
            unknown = np.unique(actions[~known])
            raise ValueError(
                f"LoggedFeedback: actions not in classes_: {unknown.tolist()[:10]} "
                f"(classes are {classes.tolist()[:20]})."
            )
        rewards = logged.rewards
        if self._logged_rewards == "binary":
            if not np.all((rewards == 0.0) | (rewards == 1.0)):
                bad = rewards[(rewards != 0.0) & (rewards != 1.0)]
                raise ValueError(
                    f"{type(self).__name__} learns from rewards 0 or 1 (its "
                    f"algorithm assumes the bit 1[action == label]); got "
                    f"rewards {bad[:5].tolist()}."
                )
        elif rewards.shape[0] and not (rewards.min() >= 0.0 and rewards.max() <= 1.0):
            bad = rewards[(rewards < 0.0) | (rewards > 1.0)]
            raise ValueError(
                f"{type(self).__name__} learns from rewards in [0, 1]; got "
                f"rewards {bad[:5].tolist()}."
            )
        return codes.astype(np.int32, copy=False)
