/* The arithmetic of the regression oracle's step (RegressionOracle.step in
 * _oracle.pyx, whose module docstring states it) on the n stored entries of
 * a row, in loops over contiguous buffers that the compiler vectorises: the
 * caller gathers a regressor's strided entries on the row's columns into a
 * buffer, these loops compute, the caller scatters the results back. Every
 * value is the same IEEE operation on the same operands as the entry-by-entry
 * loop it replaces (square roots and quotients are correctly rounded in SIMD
 * lanes too; no contraction, -ffp-contract=off), and the sum Q stays
 * sequential in the row's order. A lane may compute a quotient by zero for an
 * entry that is not moved: its value is never used. Built with -fno-math-errno (meson.build):
 * sqrt then compiles to the instruction, with no errno branch to keep the
 * loop scalar. Compiled for SSE2 and AVX2 (SKB_CLONES, _scores.h).
 */
#ifndef SKB_ORACLE_STEP_H
#define SKB_ORACLE_STEP_H

#include <math.h>
#include <stddef.h>

#include "_scores.h" /* SKB_CLONES */

/* The denominators and Q of one step with error e on the entries val[0..n):
 *
 *   adaptive (G != NULL, G[j] the squared-gradient sum of entry j's feature,
 *   updated in place): G[j] += (e val[j])^2, q_j = sqrt(G[j]), times
 *   scale[j] (NAG) when scale is not NULL; constant (G == NULL): q_j = 1.
 *
 * An entry is moved when val[j] != 0 and (adaptive) G[j] > 0 after the
 * update: qbuf[j] = q_j, else qbuf[j] = 0. Returns Q = sum over the moved
 * entries of val[j]^2 / q_j, summed sequentially in j from +0.0. An entry of
 * value 0 keeps its G[j]: G[j] + 0 * 0 is G[j] for every G[j] >= +0.0.
 *
 * The first loop has no condition (so that it is vectorised: a select would
 * need the compiler to assume that no floating-point operation traps), and
 * computes q_j and val[j]^2 / q_j for every entry; the second, sequential for
 * the sum, keeps those of the moved entries. */
SKB_CLONES
static double skb_oracle_denominators(const double* restrict val, int n,
                                      double e, double* restrict G,
                                      const double* restrict scale,
                                      double* restrict qbuf,
                                      double* restrict tbuf) {
    int j;
    double Q = 0.0;
    if (G == NULL) {
        for (j = 0; j < n; j++) {
            double v = val[j];
            if (v != 0.0) {
                qbuf[j] = 1.0;
                Q = Q + (v * v) / 1.0;
            } else {
                qbuf[j] = 0.0;
            }
        }
        return Q;
    }
    if (scale != NULL) {
        for (j = 0; j < n; j++) {
            double v = val[j], g = e * v;
            double Gn = G[j] + g * g;
            double q = scale[j] * sqrt(Gn);
            G[j] = Gn;
            qbuf[j] = q;
            tbuf[j] = (v * v) / q;
        }
    } else {
        for (j = 0; j < n; j++) {
            double v = val[j], g = e * v;
            double Gn = G[j] + g * g;
            double q = sqrt(Gn);
            G[j] = Gn;
            qbuf[j] = q;
            tbuf[j] = (v * v) / q;
        }
    }
    for (j = 0; j < n; j++) {
        if (val[j] != 0.0 && G[j] > 0.0)
            Q = Q + tbuf[j];
        else
            qbuf[j] = 0.0;
    }
    return Q;
}

/* The moves of the step: tbuf[j] = rate (e val[j]) / qbuf[j] for every
 * entry, a moved one (qbuf[j] > 0) or not (the caller skips those). */
SKB_CLONES
static void skb_oracle_moves(const double* restrict val, int n, double rate,
                             double e, const double* restrict qbuf,
                             double* restrict tbuf) {
    int j;
    for (j = 0; j < n; j++)
        tbuf[j] = (rate * (e * val[j])) / qbuf[j];
}

#endif /* SKB_ORACLE_STEP_H */
