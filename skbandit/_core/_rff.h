/* The random Fourier features of one row (FeatureMapKernel in
 * _feature_map.pyx, whose module docstring states the arithmetic): the
 * product a_j = sum_e val_e omega[col_e, j] summed sequentially in e from
 * +0.0, and z_j = factor cos(a_j + b_j) with skb_cos_reduced, fdlibm's
 * reduction and polynomials without branches (Sun Microsystems 1993), so that
 * the compiler vectorises the loop over the D features. In C so that the
 * constants are compile-time constants of the loops.
 */
#ifndef SKB_RFF_H
#define SKB_RFF_H

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "_scores.h" /* SKB_CLONES */

/* fdlibm's constants (Sun Microsystems 1993) */
#define SKB_INVPIO2 6.36619772367581382433e-01
#define SKB_ROUND_MAGIC 6755399441055744.0 /* 1.5 * 2^52 */
#define SKB_PIO2_1 1.57079632673412561417e+00 /* first 33 bits of pi/2 */
#define SKB_PIO2_2 6.07710050630396597660e-11 /* the next 33 bits */
#define SKB_PIO2_2T 2.02226624879595063154e-21 /* pi/2 - the two above */
#define SKB_COS_BOUND 1647099.3291652855 /* 2^19 pi, so |n| <= 2^20 */
static inline double skb_cos_reduced(double x) {
    double n = (x * SKB_INVPIO2 + SKB_ROUND_MAGIC) - SKB_ROUND_MAGIC;
    /* the quadrant n - 4 round(n / 4), in {-2, -1, 0, 1, 2} */
    double q = n - 4.0 * ((n * 0.25 + SKB_ROUND_MAGIC) - SKB_ROUND_MAGIC);
    double r = ((x - n * SKB_PIO2_1) - n * SKB_PIO2_2) - n * SKB_PIO2_2T;
    double z = r * r;
    double c = 1.0 - (0.5 * z - z * (z * (4.16666666666666019037e-02
        + z * (-1.38888888888741095749e-03 + z * (2.48015872894767294178e-05
        + z * (-2.75573143513906633035e-07 + z * (2.08757232129817482790e-09
        + z * -1.13596475577881948265e-11)))))));
    double s = r + (z * r) * (-1.66666666666666324348e-01
        + z * (8.33333333332248946124e-03 + z * (-1.98412698298579493134e-04
        + z * (2.75573137070700676789e-06 + z * (-2.50507602534068634195e-08
        + z * 1.58969099521155010221e-10)))));
    double q2 = q * q;
    /* C (q = 0), -S (q = 1), -C (q = +-2), S (q = -1): the weight of S is
       exactly 1 or 0 and the other term's exactly 0, so this is the
       selection without a branch (which would keep the loop scalar) */
    double wo = q2 * (4.0 - q2) / 3.0;
    return wo * (-q * s) + (1.0 - wo) * (c * (1.0 - 0.5 * q2));
}
/* a_j = sum_e val_e omega[col_e, j] from +0.0, sequential in e, for
   SKB_RFF_BLOCK features at a time held in registers (each line of omega
   read once a row); each lane is the same IEEE operations in the same
   order as the plain loop */
#define SKB_RFF_BLOCK 16
#if defined(__GNUC__)
typedef double skb_v4 __attribute__((vector_size(32)));
static inline void skb_rff_block(const double* val, const int* ind, int nnz,
                                 const double* omega, int D, int j0,
                                 double* z) {
    skb_v4 acc[SKB_RFF_BLOCK / 4];
    int e, l;
    for (l = 0; l < SKB_RFF_BLOCK / 4; l++)
        acc[l] = (skb_v4){0.0, 0.0, 0.0, 0.0};
    for (e = 0; e < nnz; e++) {
        const double* w = omega + (ptrdiff_t)(ind ? ind[e] : e) * D + j0;
        const skb_v4 v = {val[e], val[e], val[e], val[e]};
        for (l = 0; l < SKB_RFF_BLOCK / 4; l++) {
            skb_v4 wl;
            memcpy(&wl, w + 4 * l, sizeof wl);
            acc[l] = acc[l] + v * wl;
        }
    }
    memcpy(z + j0, acc, sizeof acc);
}
#else
static inline void skb_rff_block(const double* val, const int* ind, int nnz,
                                 const double* omega, int D, int j0,
                                 double* z) {
    double acc[SKB_RFF_BLOCK] = {0.0};
    int e, l;
    for (e = 0; e < nnz; e++) {
        const double* w = omega + (ptrdiff_t)(ind ? ind[e] : e) * D + j0;
        for (l = 0; l < SKB_RFF_BLOCK; l++)
            acc[l] = acc[l] + val[e] * w[l];
    }
    memcpy(z + j0, acc, sizeof acc);
}
#endif
/* z_j = factor cos(sum_e val_e omega[col_e, j] + b_j) (rff_row), the
   sum sequential over the stored entries (ind NULL: entry e is column
   e); compiled for SSE2 and AVX2 (SKB_CLONES, _scores.h) */
SKB_CLONES
static void skb_rff_row(const double* val, const int* ind, int nnz,
                        const double* omega, const double* offset, int D,
                        double factor, double* z) {
    int j0 = 0, e, j, fast = 1;
    /* two copies of the block loop so that each sees a fixed ind */
    if (ind != NULL)
        for (; j0 + SKB_RFF_BLOCK <= D; j0 += SKB_RFF_BLOCK)
            skb_rff_block(val, ind, nnz, omega, D, j0, z);
    else
        for (; j0 + SKB_RFF_BLOCK <= D; j0 += SKB_RFF_BLOCK)
            skb_rff_block(val, NULL, nnz, omega, D, j0, z);
    for (; j0 < D; j0++) {
        double a = 0.0;
        for (e = 0; e < nnz; e++)
            a = a + val[e] * omega[(ptrdiff_t)(ind ? ind[e] : e) * D + j0];
        z[j0] = a;
    }
    for (j = 0; j < D; j++) {
        z[j] = z[j] + offset[j];
        fast = fast & (fabs(z[j]) <= SKB_COS_BOUND);  /* 0 for NaN too */
    }
    if (fast)
        for (j = 0; j < D; j++)
            z[j] = factor * skb_cos_reduced(z[j]);
    else
        for (j = 0; j < D; j++)
            z[j] = factor * (fabs(z[j]) <= SKB_COS_BOUND
                             ? skb_cos_reduced(z[j]) : cos(z[j]));
}

#endif /* SKB_RFF_H */
