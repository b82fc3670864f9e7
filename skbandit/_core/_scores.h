/* Class scores of one row: out[r] = sum_j W[r, col_j] * val_j for r in [0, k).
 *
 * Each score is summed sequentially over the row's stored entries in stored
 * order (acc = acc + w * v, no fused multiply-add: the build passes
 * -ffp-contract=off), so it is bit-identical to a plain sequential dot
 * product and to the NumPy references of the tests.
 *
 * Speed: a sequential sum is bound by the latency of the floating-point add.
 * Sweeping the row once per class leaves the core waiting; here up to
 * SKB_BLOCK classes are swept together, their accumulators held in registers,
 * so that many independent sums are in flight and the row's values and
 * indices are loaded once per block. The block width is a compile-time
 * constant in each specialisation (the inner loop is fully unrolled and the
 * accumulator array is kept in registers), chosen at run time by a switch.
 *
 * ind == NULL means a dense row: col_j = j.
 */
#ifndef SKB_SCORES_H
#define SKB_SCORES_H

#include <stddef.h>

#define SKB_BLOCK 12

#if defined(__GNUC__) || defined(__clang__)
#define SKB_INLINE static inline __attribute__((always_inline))
#else
#define SKB_INLINE static inline
#endif

SKB_INLINE void skb_scores_block(const double *W, ptrdiff_t ldw,
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
            const double *col = W + j;
            for (r = 0; r < w; r++) acc[r] = acc[r] + col[r * ldw] * v;
        }
    } else {
        for (j = 0; j < nnz; j++) {
            const double v = val[j];
            const double *col = W + ind[j];
            for (r = 0; r < w; r++) acc[r] = acc[r] + col[r * ldw] * v;
        }
    }
    for (r = 0; r < w; r++) out[r] = acc[r];
}

#define SKB_CASE(n) \
    case n: skb_scores_block(Wb, ldw, val, ind, nnz, out + r0, n); break;

/* Scores of all k classes. Classes are split into ceil(k / SKB_BLOCK)
 * blocks of (nearly) equal width, each swept once over the row. */
static void skb_linear_scores(const double *W, ptrdiff_t ldw, int k,
                              const double *val, const int *ind,
                              ptrdiff_t nnz, double *out)
{
    int n_blocks = (k + SKB_BLOCK - 1) / SKB_BLOCK;
    int r0 = 0, b, w;
    for (b = 0; b < n_blocks; b++) {
        const double *Wb = W + (ptrdiff_t)r0 * ldw;
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

#endif
