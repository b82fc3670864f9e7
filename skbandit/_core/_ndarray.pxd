# The exact-array test shared by the compiled checks of rows and feedback
# (skbandit._base._checks, skbandit._core._live): NumPy's public C API only,
# no Python call.

cimport numpy as cnp


cdef inline bint exact_array(object a, int ndim, int typenum) noexcept:
    """``a`` is exactly an ``ndarray`` (not a subclass) of ``ndim``
    dimensions, of native ``typenum`` values, C-contiguous."""
    cdef cnp.ndarray arr
    if type(a) is not cnp.ndarray:
        return False
    arr = <cnp.ndarray>a
    return (cnp.PyArray_NDIM(arr) == ndim
            and cnp.PyArray_TYPE(arr) == typenum
            and cnp.PyArray_ISNOTSWAPPED(arr)
            and cnp.PyArray_IS_C_CONTIGUOUS(arr))
