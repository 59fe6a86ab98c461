/* The covariance arithmetic of a linear Kalman filter, for the state
 * estimate's every tick (controller/core/estimator.py): small dense
 * matrices, row-major, with a measurement matrix that is mostly zeros (a
 * leg's rows touch the body and that leg's foot), whose zeros are skipped.
 * No allocation: the caller owns every buffer (see kernel.h). */
#include "kernel.h"

#include <math.h>
#include <string.h>

/* P = A P A^T + diag(q); tmp holds n x n. */
void mk_kalman_predict(int32_t n, const double *A, double *P, const double *q, double *tmp)
{
    /* tmp = A P */
    for (int32_t i = 0; i < n; i++) {
        double *row = tmp + (size_t)i * n;
        memset(row, 0, sizeof(double) * (size_t)n);
        for (int32_t k = 0; k < n; k++) {
            const double a = A[(size_t)i * n + k];
            if (a == 0.0) continue;
            const double *pk = P + (size_t)k * n;
            for (int32_t j = 0; j < n; j++) row[j] += a * pk[j];
        }
    }
    /* P = tmp A^T */
    for (int32_t i = 0; i < n; i++) {
        const double *ti = tmp + (size_t)i * n;
        for (int32_t j = 0; j < n; j++) {
            const double *aj = A + (size_t)j * n;
            double s = 0.0;
            for (int32_t k = 0; k < n; k++)
                if (aj[k] != 0.0) s += ti[k] * aj[k];
            P[(size_t)i * n + j] = s;
        }
    }
    for (int32_t i = 0; i < n; i++) P[(size_t)i * n + i] += q[i];
}

/* x += K (y - H x), P -= K H P with K = P H^T (H P H^T + diag(r))^-1,
 * through a Cholesky factor of the innovation covariance; P kept
 * symmetric. work holds 2 m n + m m + m doubles. Returns 0, or -1 (nothing
 * changed) if the innovation covariance is not positive definite. */
int32_t mk_kalman_update(int32_t n, int32_t m, double *x, double *P, const double *H,
                         const double *r, const double *y, double *work)
{
    double *HP = work;                          /* m x n */
    double *Z = HP + (size_t)m * n;             /* m x n: S^-1 H P, i.e. K^T */
    double *S = Z + (size_t)m * n;              /* m x m, then its Cholesky factor */
    double *e = S + (size_t)m * m;              /* m: the innovation */

    for (int32_t i = 0; i < m; i++) {
        const double *h = H + (size_t)i * n;
        double *out = HP + (size_t)i * n;
        memset(out, 0, sizeof(double) * (size_t)n);
        double hx = 0.0;
        for (int32_t k = 0; k < n; k++) {
            if (h[k] == 0.0) continue;
            const double *pk = P + (size_t)k * n;
            for (int32_t j = 0; j < n; j++) out[j] += h[k] * pk[j];
            hx += h[k] * x[k];
        }
        e[i] = y[i] - hx;
    }
    for (int32_t i = 0; i < m; i++) {
        const double *hpi = HP + (size_t)i * n;
        for (int32_t j = 0; j <= i; j++) {
            const double *h = H + (size_t)j * n;
            double s = 0.0;
            for (int32_t k = 0; k < n; k++)
                if (h[k] != 0.0) s += hpi[k] * h[k];
            S[(size_t)i * m + j] = s;
        }
        S[(size_t)i * m + i] += r[i];
    }
    /* Cholesky, lower triangle in place: S = L L^T. */
    for (int32_t j = 0; j < m; j++) {
        double d = S[(size_t)j * m + j];
        for (int32_t k = 0; k < j; k++) d -= S[(size_t)j * m + k] * S[(size_t)j * m + k];
        if (!(d > 0.0)) return -1;
        d = sqrt(d);
        S[(size_t)j * m + j] = d;
        for (int32_t i = j + 1; i < m; i++) {
            double s = S[(size_t)i * m + j];
            for (int32_t k = 0; k < j; k++) s -= S[(size_t)i * m + k] * S[(size_t)j * m + k];
            S[(size_t)i * m + j] = s / d;
        }
    }
    /* Z = L^-T L^-1 HP, column block by column block (all n at once per row). */
    memcpy(Z, HP, sizeof(double) * (size_t)m * n);
    for (int32_t i = 0; i < m; i++) {               /* forward: L W = HP */
        double *zi = Z + (size_t)i * n;
        for (int32_t k = 0; k < i; k++) {
            const double l = S[(size_t)i * m + k];
            if (l == 0.0) continue;
            const double *zk = Z + (size_t)k * n;
            for (int32_t j = 0; j < n; j++) zi[j] -= l * zk[j];
        }
        const double inv = 1.0 / S[(size_t)i * m + i];
        for (int32_t j = 0; j < n; j++) zi[j] *= inv;
    }
    for (int32_t i = m - 1; i >= 0; i--) {          /* back: L^T Z = W */
        double *zi = Z + (size_t)i * n;
        for (int32_t k = i + 1; k < m; k++) {
            const double l = S[(size_t)k * m + i];
            if (l == 0.0) continue;
            const double *zk = Z + (size_t)k * n;
            for (int32_t j = 0; j < n; j++) zi[j] -= l * zk[j];
        }
        const double inv = 1.0 / S[(size_t)i * m + i];
        for (int32_t j = 0; j < n; j++) zi[j] *= inv;
    }
    /* x += Z^T e; P -= HP^T Z (= K H P), symmetrised. */
    for (int32_t i = 0; i < m; i++) {
        const double *zi = Z + (size_t)i * n;
        for (int32_t j = 0; j < n; j++) x[j] += zi[j] * e[i];
    }
    for (int32_t a = 0; a < n; a++) {
        for (int32_t b = a; b < n; b++) {
            double s = 0.0;
            for (int32_t i = 0; i < m; i++) s += HP[(size_t)i * n + a] * Z[(size_t)i * n + b];
            const double v = 0.5 * (P[(size_t)a * n + b] + P[(size_t)b * n + a]) - s;
            P[(size_t)a * n + b] = v;
            P[(size_t)b * n + a] = v;
        }
    }
    return 0;
}
