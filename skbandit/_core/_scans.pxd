# The CSR structure check of _scans.pyx, for the compiled checks of
# skbandit._base._checks (the common row form of a CSR matrix).

ctypedef fused index_t:
    int
    long long


cdef str _csr_problem(const index_t* indptr, Py_ssize_t len_indptr,
                      const index_t* indices, Py_ssize_t len_indices,
                      Py_ssize_t n_data, Py_ssize_t n_rows, Py_ssize_t n_cols,
                      bint* canonical)
