"""The compiled checks of every training call (``skbandit._base``).

* ``kernel_key``/``key_holds``: the identity key of the kernel cache
  (``TransactionMixin._kernel``);
* ``same_entries``: the parameters' identity check
  (``InputValidationMixin._validate_params_cached``);
* ``rollback_record``: the record of a rollback point, a meta-learner's
  candidates and a pipeline's learner included
  (``StateMixin._rollback_point``);
* ``record_attributes``: the record of a live round's rollback point
  (``LiveSession._point``);
* ``array_bytes``: the bytes of the arrays among some attributes
  (``StateMixin._model_bytes``, which sizes the undo journal);
* ``dense_common_form``, ``csr_common_form``: the tests of rows already in
  the common row form (``_rows._common_form``).

The identity key
----------------
A learner's compiled kernel is kept from call to call while the objects it is
built from are the same objects (compared with ``is``). ``kernel_key`` lists
those objects: the learner's class and its ``_make_kernel``, then for every
entry of the instance dictionary but the counters (``not_keyed``) its name and
value, and what the value holds one level down: the items of a list or tuple
(a selector's candidates; a ``(name, object)`` step of a pipeline, both
parts), the attribute values of an object with a ``__dict__`` (an exploration
rule, a transformer), and a learner's own key, recursively (a candidate, a
pipeline's learner; a learner is an instance of ``mixin``).
``key_holds(key, est, ...)`` is true when the key of ``est`` now would hold the
same objects as ``key``, in order: the same walk, compared as it goes.

Compiled because they run on every training call: walked in Python, the key
alone was a sixth of the cost of a one-row ``partial_fit``. Only public
CPython and NumPy C APIs are used (dictionary iteration, ``getattr``,
identity; the array's dimensions, type, byte order and contiguity flags).
"""

cimport numpy as cnp

from skbandit._core._kernel cimport skb_within_bound
from skbandit._core._ndarray cimport exact_array
from skbandit._core._scans cimport _csr_problem

cnp.import_array()


cdef class _Walk:
    """The walk of ``kernel_key``: appends each object to ``key`` or, when
    ``compare``, checks it is the object at the same position of a cached
    ``key`` (``key_holds``), stopping at the first that is not."""
    cdef list key
    cdef Py_ssize_t pos
    cdef bint compare
    cdef bint same

    def __cinit__(self, list key, bint compare):
        self.key = key
        self.pos = 0
        self.compare = compare
        self.same = True

    cdef inline bint put(self, object value) except -1:
        if not self.compare:
            self.key.append(value)
            return True
        if self.pos < len(self.key) and self.key[self.pos] is value:
            self.pos += 1
            return True
        self.same = False
        return False


cdef bint _add_object(_Walk w, object value, frozenset not_keyed, type mixin) except -1:
    cdef object held, item
    if isinstance(value, mixin):
        return _fill(w, value, not_keyed, mixin)
    if not isinstance(value, type):
        held = getattr(value, "__dict__", None)
        if held is not None:
            if not w.put(len(held)):
                return False
            for item in (<dict>held).values():
                if not w.put(item):
                    return False
    return True


cdef bint _add_held(_Walk w, object value, frozenset not_keyed, type mixin) except -1:
    cdef object item, part
    if type(value) is list or type(value) is tuple:
        if not w.put(len(value)):
            return False
        for item in value:
            if not w.put(item):
                return False
            if type(item) is tuple:  # (a step: name, object)
                for part in item:
                    if not (w.put(part) and _add_object(w, part, not_keyed, mixin)):
                        return False
            elif not _add_object(w, item, not_keyed, mixin):
                return False
        return True
    return _add_object(w, value, not_keyed, mixin)


cdef bint _fill(_Walk w, object est, frozenset not_keyed, type mixin) except -1:
    cdef object cls = type(est)
    cdef dict entries = est.__dict__
    # (the class's factory as the class holds it now: a test may replace it)
    if not (w.put(cls) and w.put(cls._make_kernel)):
        return False
    for name, value in entries.items():
        if name not in not_keyed:
            if not (
                w.put(name)
                and w.put(value)
                and _add_held(w, value, not_keyed, mixin)
            ):
                return False
    return True


def kernel_key(object est, frozenset not_keyed, type mixin):
    """The objects a kernel of ``est`` is built from, in a fixed order
    (module docstring)."""
    cdef list key = []
    _fill(_Walk(key, False), est, not_keyed, mixin)
    return key


def key_holds(list key, object est, frozenset not_keyed, type mixin):
    """True when ``kernel_key(est, not_keyed, mixin)`` would hold the same
    objects (``is``), in order, as ``key``: the same walk, compared as it
    goes, without building the list (the check of every training call)."""
    cdef _Walk w = _Walk(key, True)
    return _fill(w, est, not_keyed, mixin) and w.same and w.pos == len(key)


def same_entries(dict entries, tuple names, object cached):
    """True when ``cached`` is a tuple holding, in order, the very objects
    ``entries.get(name)`` of ``names`` (the parameters' check of
    ``InputValidationMixin._validate_params_cached``)."""
    cdef Py_ssize_t i, n = len(names)
    if type(cached) is not tuple or len(<tuple>cached) != n:
        return False
    for i in range(n):
        if entries.get(names[i]) is not (<tuple>cached)[i]:
            return False
    return True


cdef object _record(object est, tuple counters, object base, type mixin, bint root):
    cdef dict state = {}
    cdef list subs = []
    cdef dict entries
    cdef object held, sub
    if not root and getattr(type(est), "_rollback_point") is not base:
        return est._rollback_point(False)  # a learner with its own record
    for name in est._state_attrs:
        state[name] = getattr(est, name)
    for name in counters:
        state[name] = getattr(est, name)
    entries = est.__dict__
    held = entries.get("candidates_")
    if held is not None:
        for sub in held:
            subs.append(_record(sub, counters, base, mixin, False))
    held = getattr(est, "learner_", None)  # (a pipeline's: a property)
    if held is not None and isinstance(held, mixin):
        subs.append(_record(held, counters, base, mixin, False))
    return (state, subs)


def rollback_record(object est, tuple counters, object base, type mixin):
    """``(state, subs)``: ``state`` maps ``est``'s state attributes and the
    ``counters`` to their objects (arrays by reference); ``subs`` holds the
    same record for each of its ``candidates_`` then for its ``learner_``
    (when an instance of ``mixin``), recursively. A sub-learner whose class
    overrides ``_rollback_point`` (``base`` is the skeleton's) gives its own
    ``_rollback_point(False)``. One compiled walk: a one-row call or a live
    round of a meta-learner makes this record every round."""
    return _record(est, counters, base, mixin, True)


def record_attributes(list objects, list names, list dicts, object missing):
    """``[getattr(objects[i], names[i], missing) for i ...]``: a live round's
    rollback point (``LiveSession._point``; one compiled loop, as a live
    round records it every round). ``dicts[i]``, when not None, is the
    instance dictionary of ``objects[i]``, read directly: the caller gives it
    only where that read is what ``getattr`` reads (``plain_dicts`` of
    ``skbandit._live_hooks``), and it skips the type's lookup."""
    cdef Py_ssize_t i, n = len(objects)
    cdef list out = [None] * n
    cdef object d
    if len(names) != n or len(dicts) != n:
        raise ValueError(
            "record_attributes: objects, names and dicts differ in length")
    for i in range(n):
        d = dicts[i]
        if d is None:
            out[i] = getattr(objects[i], names[i], missing)
        else:
            out[i] = (<dict?>d).get(names[i], missing)
    return out


def array_bytes(object est, tuple names):
    """The sum of ``getattr(est, name).nbytes`` over the ``names`` whose value
    is a NumPy array (others count 0)."""
    cdef Py_ssize_t total = 0
    cdef object value
    for name in names:
        value = getattr(est, name)
        if cnp.PyArray_Check(value):
            total += cnp.PyArray_NBYTES(<cnp.ndarray>value)
    return total


cdef inline bint _within(cnp.ndarray arr, double bound) noexcept:
    """Every value of the float64 array finite and ``|x| <= bound`` (the scan
    of ``skbandit._core._scans.within_bound``, without the GIL)."""
    cdef const double* values = <const double*>cnp.PyArray_DATA(arr)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(arr)
    cdef int ok
    with nogil:
        ok = skb_within_bound(values, n, bound)
    return ok != 0


def csr_common_form(object data, object indices, object indptr,
                    Py_ssize_t n_rows, Py_ssize_t n_cols, Py_ssize_t n_features,
                    double bound):
    """True when the arrays of a CSR matrix of shape ``(n_rows, n_cols)`` are
    in the common row form: at least one row, ``n_features`` columns, exact
    1-D C-contiguous ``ndarray``s, ``data`` native float64, ``indices`` and
    ``indptr`` both native int32 or both int64, a valid structure
    (``check_csr``) with canonical rows and at least one stored value, every
    value finite and ``|x| <= bound``."""
    cdef bint canonical = False
    cdef str problem
    if n_rows <= 0 or n_cols != n_features or not exact_array(data, 1, cnp.NPY_DOUBLE):
        return False
    if exact_array(indices, 1, cnp.NPY_INT32) and exact_array(indptr, 1, cnp.NPY_INT32):
        problem = _csr_problem(
            <const int*>cnp.PyArray_DATA(<cnp.ndarray>indptr),
            cnp.PyArray_SIZE(<cnp.ndarray>indptr),
            <const int*>cnp.PyArray_DATA(<cnp.ndarray>indices),
            cnp.PyArray_SIZE(<cnp.ndarray>indices),
            cnp.PyArray_SIZE(<cnp.ndarray>data), n_rows, n_cols, &canonical)
        if problem or not canonical:
            return False
        if (<const int*>cnp.PyArray_DATA(<cnp.ndarray>indptr))[n_rows] <= 0:
            return False
    elif exact_array(indices, 1, cnp.NPY_INT64) and exact_array(indptr, 1, cnp.NPY_INT64):
        problem = _csr_problem(
            <const long long*>cnp.PyArray_DATA(<cnp.ndarray>indptr),
            cnp.PyArray_SIZE(<cnp.ndarray>indptr),
            <const long long*>cnp.PyArray_DATA(<cnp.ndarray>indices),
            cnp.PyArray_SIZE(<cnp.ndarray>indices),
            cnp.PyArray_SIZE(<cnp.ndarray>data), n_rows, n_cols, &canonical)
        if problem or not canonical:
            return False
        if (<const long long*>cnp.PyArray_DATA(<cnp.ndarray>indptr))[n_rows] <= 0:
            return False
    else:
        return False
    return _within(<cnp.ndarray>data, bound)


def dense_common_form(object X, Py_ssize_t n_features, double bound):
    """True when ``X`` is exactly an ``ndarray`` of 2 dimensions, native
    float64, C-contiguous, with at least one row and ``n_features`` columns,
    every value finite and ``|x| <= bound`` (the scan of
    ``skbandit._core._scans.within_bound``)."""
    if not (exact_array(X, 2, cnp.NPY_DOUBLE)
            and cnp.PyArray_DIM(<cnp.ndarray>X, 0) > 0
            and cnp.PyArray_DIM(<cnp.ndarray>X, 1) == n_features):
        return False
    return _within(<cnp.ndarray>X, bound)
