/* Leg statics for the state estimate (controller/core/estimator.py): the
 * force each three-joint leg pushes with, from its joint torques through
 * its Jacobian, tau = J^T f, solved per leg by Cramer's rule; a leg near a
 * singularity (stretched straight) gets the damped least-squares answer,
 * (J J^T + lambda I) f = J tau. No allocation (see kernel.h). */
#include "kernel.h"

#include <math.h>

#define SINGULAR 1e-9      /* |det J| below this (m^3) counts as singular */
#define DAMPING 1e-6       /* lambda of the damped least squares */

static double det3(const double m[9])
{
    return m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6])
         + m[2] * (m[3] * m[7] - m[4] * m[6]);
}

/* Solve M v = b (3 x 3, row-major) by Cramer's rule; det is det(M). */
static void cramer3(const double M[9], const double b[3], double det, double v[3])
{
    for (int c = 0; c < 3; c++) {
        double m[9];
        for (int i = 0; i < 9; i++) m[i] = M[i];
        for (int r = 0; r < 3; r++) m[3 * r + c] = b[r];
        v[c] = det3(m) / det;
    }
}

int32_t mk_leg_forces(int32_t legs, const double *J, const double *tau, double *f)
{
    int32_t singular = 0;
    for (int32_t l = 0; l < legs; l++) {
        const double *j = J + 9 * l;
        const double *t = tau + 3 * l;
        double *out = f + 3 * l;
        double Jt[9];
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) Jt[3 * r + c] = j[3 * c + r];
        const double det = det3(Jt);
        if (fabs(det) > SINGULAR) {
            cramer3(Jt, t, det, out);
            continue;
        }
        singular++;
        double N[9], b[3];
        for (int r = 0; r < 3; r++) {
            b[r] = j[3 * r] * t[0] + j[3 * r + 1] * t[1] + j[3 * r + 2] * t[2];
            for (int c = 0; c < 3; c++)
                N[3 * r + c] = j[3 * r] * j[3 * c] + j[3 * r + 1] * j[3 * c + 1]
                             + j[3 * r + 2] * j[3 * c + 2] + (r == c ? DAMPING : 0.0);
        }
        cramer3(N, b, det3(N), out);
    }
    return singular;
}
