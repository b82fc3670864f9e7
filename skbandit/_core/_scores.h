/* Class scores of one row: out[r] = sum_j W[col_j, r] * val_j for r in [0, k),
 * with the weights stored feature-major: W is (d, k) row-major, class r's
 * weight on feature c at W[c * k + r] (LinearKernel in _kernel.pxd).
 *
 * Each score is summed sequentially over the row's stored entries in stored
 * order (acc = acc + w * v, no fused multiply-add: the build passes
 * -ffp-contract=off), so it is bit-identical to a plain sequential dot
 * product and to the NumPy references of the tests.
 *
 * Memory: a stored entry's k weights are contiguous, 8 k bytes, so a sparse
 * row of nnz entries reads about nnz * 8 k / 64 cache lines (k = 20: 3 per
 * entry) where a class-major W (one row per class) needed nnz * k, one per
 * class and entry. For a model far beyond the caches (hashed rows at
 * d = 2^20) these lines are the round's cost: each is a trip to memory.
 *
 * Speed: a sequential sum is bound by the latency of the floating-point add.
 * Up to SKB_BLOCK classes are swept together, their accumulators held in
 * registers, so that many independent sums are in flight and the row's
 * values and indices are loaded once per block; the block's weights of one
 * entry are adjacent, so the compiler may add them pairwise in vector
 * registers (the same IEEE operation on each lane as the scalar code). The
 * block width is a compile-time constant in each specialisation (the inner
 * loop is fully unrolled), chosen at run time by a switch.
 * skb_linear_scores is compiled for SSE2 and AVX2 (SKB_CLONES below).
 *
 * ind == NULL means a dense row: col_j = j.
 */
#ifndef SKB_SCORES_H
#define SKB_SCORES_H

#include <stddef.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define SKB_BLOCK 12

/* |sum(p) - 1| allowed in a played distribution (valid_distribution in
 * _kernel.pxd): far above the rounding of k additions (about k * 2^-53),
 * far below any real error. */
#define SKB_DISTRIBUTION_TOL 1e-9

#if defined(__GNUC__) || defined(__clang__)
#define SKB_INLINE static inline __attribute__((always_inline))
#else
#define SKB_INLINE static inline
#endif

/* Hot loops compiled twice where the compiler can choose at load time (GCC
 * and Clang on x86-64 with glibc, whose loader resolves target_clones):
 * once for the baseline x86-64 (SSE2), once for AVX2, the processor picking
 * one when the module loads. Both clones are the same IEEE operations lane
 * by lane, in the same order (no contraction: -ffp-contract=off), so they
 * give the same bits; AVX2 does four lanes per instruction where SSE2 does
 * two. Elsewhere, one baseline build. Define SKB_NO_CLONES to build the
 * baseline only (to test it on an AVX2 machine). */
#include <string.h>  /* defines __GLIBC__ under glibc */
#if !defined(SKB_NO_CLONES) && (defined(__GNUC__) || defined(__clang__)) \
    && defined(__x86_64__) && defined(__GLIBC__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define SKB_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef SKB_CLONES
#define SKB_CLONES
#endif

/* Hide a value from the optimiser (it can no longer derive it from others):
 * used on the row pointers below. */
#if defined(__GNUC__) || defined(__clang__)
#define SKB_OPAQUE(p) __asm__("" : "+r"(p))
#else
#define SKB_OPAQUE(p) ((void)0)
#endif

SKB_INLINE void skb_scores_block(const double *W, ptrdiff_t k,
                                 const double *val, const int *ind,
                                 ptrdiff_t nnz, double *out, const int w)
{
    double acc[SKB_BLOCK];
    int r;
    ptrdiff_t j;
    for (r = 0; r < w; r++) acc[r] = 0.0;
    if (ind == NULL) {
        for (j = 0; j < nnz; j++) {
            const double v = val[j];
            const double *wj = W + j * k;
            for (r = 0; r < w; r++) acc[r] = acc[r] + wj[r] * v;
        }
    } else {
        for (j = 0; j < nnz; j++) {
            const double v = val[j];
            const double *wj = W + (ptrdiff_t)ind[j] * k;
            for (r = 0; r < w; r++) acc[r] = acc[r] + wj[r] * v;
        }
    }
    for (r = 0; r < w; r++) out[r] = acc[r];
}

#define SKB_CASE(n) \
    case n: skb_scores_block(W + r0, k, val, ind, nnz, out + r0, n); break;

/* Scores of all k classes. Classes are split into ceil(k / SKB_BLOCK)
 * blocks of (nearly) equal width, each swept once over the row. */
SKB_CLONES
static void skb_linear_scores(const double *W, int k, const double *val,
                              const int *ind, ptrdiff_t nnz, double *out)
{
    int n_blocks = (k + SKB_BLOCK - 1) / SKB_BLOCK;
    int r0 = 0, b, w;
    for (b = 0; b < n_blocks; b++) {
        /* Widths of the remaining blocks differ by at most one. */
        w = (k - r0 + (n_blocks - b) - 1) / (n_blocks - b);
        switch (w) {
            SKB_CASE(1) SKB_CASE(2) SKB_CASE(3) SKB_CASE(4)
            SKB_CASE(5) SKB_CASE(6) SKB_CASE(7) SKB_CASE(8)
            SKB_CASE(9) SKB_CASE(10) SKB_CASE(11) SKB_CASE(12)
            default: break;  /* unreachable: 1 <= w <= SKB_BLOCK */
        }
        r0 += w;
    }
}

#undef SKB_CASE

/* Software prefetch: a hint that the line holding *p will be written soon
 * (it is fetched, for writing, into the caches). It changes no value and never
 * faults (an address outside the process is ignored). A compiler without
 * __builtin_prefetch gets nothing. Used by PNewtron's rounds and by
 * skb_prefetch_row_w. */
#if defined(__GNUC__) || defined(__clang__)
#define SKB_PREFETCH_W(p) __builtin_prefetch((p), 1)
#else
#define SKB_PREFETCH_W(p) ((void)(p))
#endif

/* Prefetch, for writing, w[ind[j] * s] for the stored entries j of a sparse
 * row: the lines a per-entry update of the strided vector w (entry c at
 * w[c * s]) on the row's support (w += c x) reads and writes. */
static inline void skb_prefetch_row_w(const double *w, ptrdiff_t s,
                                      const int *ind, ptrdiff_t nnz)
{
    ptrdiff_t j;
    for (j = 0; j < nnz; j++) SKB_PREFETCH_W(w + (ptrdiff_t)ind[j] * s);
}

/* The non-zero entries of a dense row x[0..d) in column order: their columns
 * to ind[0..n) and their values to val[0..n); returns n (-0.0 counts as
 * zero). Branch-free: every column index is written at the current count,
 * which advances only past non-zeros; with SSE2 (every x86-64) four entries
 * are compared at once and the count advances once per four, by the number
 * of non-zeros (a 4-bit mask's popcount). Then the n values are gathered. */
static const unsigned char SKB_POPCOUNT4[16] = {0, 1, 1, 2, 1, 2, 2, 3,
                                                1, 2, 2, 3, 2, 3, 3, 4};

static inline int skb_nonzeros(const double *x, int d, int *ind, double *val)
{
    int j = 0, n = 0, m;
#if defined(__SSE2__)
    const __m128d zero = _mm_setzero_pd();
    for (; j + 4 <= d; j += 4) {
        /* bit i of m: x[j + i] != 0 (the offsets below stay <= j + 3 < d) */
        m = _mm_movemask_pd(_mm_cmpneq_pd(_mm_loadu_pd(x + j), zero))
            | (_mm_movemask_pd(_mm_cmpneq_pd(_mm_loadu_pd(x + j + 2), zero)) << 2);
        ind[n] = j;
        ind[n + (m & 1)] = j + 1;
        ind[n + SKB_POPCOUNT4[m & 3]] = j + 2;
        ind[n + SKB_POPCOUNT4[m & 7]] = j + 3;
        n += SKB_POPCOUNT4[m];
    }
#else
    (void)m;
#endif
    for (; j < d; j++) {
        ind[n] = j;
        n += (x[j] != 0.0);
    }
    for (j = 0; j < n; j++) val[j] = x[ind[j]];
    return n;
}

#include <stdint.h>
#include <string.h>

/* 1 when every |v[j]| <= bound (bound finite and >= 0), 0 when one is larger,
 * NaN or infinite: max_abs(v) <= bound. For non-negative doubles the order of
 * the bit patterns is the order of the values, and NaN's patterns lie above
 * infinity's, so |v| <= bound <=> bits(|v|) - (bits(bound) + 1) wraps around
 * (top bit set). Integer operations only, branch-free; with SSE2 eight values
 * per iteration in two accumulators (the compiler's own vectorisation takes
 * two per iteration: 3.5 instructions per value, 2.4 here). */
static inline int skb_within_bound(const double *v, ptrdiff_t n, double bound)
{
    uint64_t lim, acc = ~(uint64_t)0, u;
    ptrdiff_t j = 0;
    memcpy(&lim, &bound, sizeof lim);
    lim += 1;
#if defined(__SSE2__) && defined(__x86_64__)
    if (n >= 8) {
        const __m128i mask = _mm_set1_epi64x(0x7fffffffffffffffLL);
        const __m128i l = _mm_set1_epi64x((long long)lim);
        __m128i a0 = _mm_set1_epi32(-1), a1 = a0;
        for (; j + 8 <= n; j += 8) {
            const __m128i *p = (const __m128i *)(v + j);
            a0 = _mm_and_si128(a0, _mm_sub_epi64(_mm_and_si128(_mm_loadu_si128(p), mask), l));
            a1 = _mm_and_si128(a1, _mm_sub_epi64(_mm_and_si128(_mm_loadu_si128(p + 1), mask), l));
            a0 = _mm_and_si128(a0, _mm_sub_epi64(_mm_and_si128(_mm_loadu_si128(p + 2), mask), l));
            a1 = _mm_and_si128(a1, _mm_sub_epi64(_mm_and_si128(_mm_loadu_si128(p + 3), mask), l));
        }
        a0 = _mm_and_si128(a0, a1);
        acc &= (uint64_t)_mm_cvtsi128_si64(a0)
               & (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(a0, a0));
    }
#endif
    for (; j < n; j++) {
        memcpy(&u, v + j, sizeof u);
        acc &= (u & 0x7fffffffffffffffULL) - lim;
    }
    return (int)(acc >> 63);
}

/* One branch-free scan of CSR column indices ind[0..nnz): sets *out_of_range
 * when one may be outside [0, n_cols) (compared unsigned, so a negative index
 * counts) and returns the number of positions j >= 1 with ind[j] <= ind[j - 1]
 * (the rows are canonical when every such position starts a row).
 * SKB_SCAN_TAIL(NAME, T, U) defines NAME(ind, j, nnz, n_cols, bad): the same
 * scan of the positions j.. (j >= 1), or-ing the range test into *bad. */
#define SKB_SCAN_TAIL(NAME, T, U)                                             \
static inline ptrdiff_t NAME(const T *ind, ptrdiff_t j, ptrdiff_t nnz,        \
                             T n_cols, U *bad)                                \
{                                                                             \
    ptrdiff_t desc = 0;                                                       \
    U b = 0;                                                                  \
    for (; j < nnz; j++) {                                                    \
        b |= (U)ind[j] >= (U)n_cols;                                          \
        desc += ind[j] <= ind[j - 1];                                         \
    }                                                                         \
    *bad |= b;                                                                \
    return desc;                                                              \
}
SKB_SCAN_TAIL(skb_scan_tail_i32, int, unsigned int)
SKB_SCAN_TAIL(skb_scan_tail_i64, long long, unsigned long long)
#undef SKB_SCAN_TAIL

/* 32-bit indices: with SSE2, four positions per iteration (2.5 instructions
 * per index; the compiler's own vectorisation widens the count to 64 bits,
 * 4.75). The unsigned range test is a signed one after flipping the top bit;
 * a lane counts the increasing positions (ind[j] > ind[j - 1]) of at most
 * 2^28 iterations per chunk, so the 32-bit lanes and their sum cannot
 * overflow; desc = positions - increasing ones. */
static inline ptrdiff_t skb_scan_indices_i32(const int *ind, ptrdiff_t nnz,
                                             int n_cols, int *out_of_range)
{
    ptrdiff_t j = 1, desc = 0;
    unsigned int bad = 0;
    if (nnz <= 0) {
        *out_of_range = 0;
        return 0;
    }
    bad |= (unsigned int)ind[0] >= (unsigned int)n_cols;
#if defined(__SSE2__)
    if (nnz >= 5) {
        const __m128i bias = _mm_set1_epi32((int)0x80000000u);
        const __m128i lim = _mm_xor_si128(_mm_set1_epi32(n_cols), bias);
        __m128i good = _mm_set1_epi32(-1);
        while (j + 4 <= nnz) {
            ptrdiff_t end = j + ((nnz - j) & ~(ptrdiff_t)3), j0 = j;
            __m128i inc = _mm_setzero_si128();
            if (end - j > ((ptrdiff_t)1 << 30)) end = j + ((ptrdiff_t)1 << 30);
            for (; j < end; j += 4) {
                const __m128i cur = _mm_loadu_si128((const __m128i *)(ind + j));
                const __m128i prev = _mm_loadu_si128((const __m128i *)(ind + j - 1));
                good = _mm_and_si128(good, _mm_cmpgt_epi32(lim, _mm_xor_si128(cur, bias)));
                inc = _mm_sub_epi32(inc, _mm_cmpgt_epi32(cur, prev));
            }
            inc = _mm_add_epi32(inc, _mm_shuffle_epi32(inc, 0x4E));
            inc = _mm_add_epi32(inc, _mm_shuffle_epi32(inc, 0xB1));
            desc += (j - j0) - (ptrdiff_t)_mm_cvtsi128_si32(inc);
        }
        bad |= _mm_movemask_epi8(good) != 0xFFFF;
    }
#endif
    desc += skb_scan_tail_i32(ind, j, nnz, n_cols, &bad);
    *out_of_range = bad != 0;
    return desc;
}

static inline ptrdiff_t skb_scan_indices_i64(const long long *ind, ptrdiff_t nnz,
                                             long long n_cols, int *out_of_range)
{
    unsigned long long bad = 0;
    ptrdiff_t desc = 0;
    if (nnz > 0) {
        bad |= (unsigned long long)ind[0] >= (unsigned long long)n_cols;
        desc = skb_scan_tail_i64(ind, 1, nnz, n_cols, &bad);
    }
    *out_of_range = bad != 0;
    return desc;
}

#endif
