/* Leg kinematics of the 3-DoF quadruped leg (abad, hip, knee), every leg
 * at once: the arithmetic of controller/robot/kinematics.py, whose
 * docstring gives the conventions and formulas, here because the tick runs
 * it several times (IK of the gait, the estimate's forward kinematics)
 * and small numpy arrays cost far more in call overhead than in sums.
 * Row-major arrays, no allocation (see kernel.h). */
#include "kernel.h"

#include <math.h>
#include <stddef.h>

#define PI 3.14159265358979323846

void mk_leg_forward(const mk_legs *g, const double *q, double *p, double *J)
{
    for (int32_t l = 0; l < g->legs; l++) {
        const double *ql = q + 3 * l;
        const double s0 = sin(ql[0]), c0 = cos(ql[0]);
        const double s1 = sin(ql[1]), c1 = cos(ql[1]);
        const double s12 = sin(ql[1] + ql[2]), c12 = cos(ql[1] + ql[2]);
        const double h = g->l2 * c1 + g->l3 * c12;
        const double ly = g->side[l] * g->l1;
        double *pl = p + 3 * l;
        pl[0] = g->l2 * s1 + g->l3 * s12 + g->hip[3 * l];
        pl[1] = ly * c0 + h * s0 + g->hip[3 * l + 1];
        pl[2] = ly * s0 - h * c0 + g->hip[3 * l + 2];
        if (J == NULL) continue;
        const double dh2 = -g->l3 * s12;
        const double dh1 = dh2 - g->l2 * s1;
        double *j = J + 9 * l;
        j[0] = 0.0;
        j[1] = h;
        j[2] = g->l3 * c12;
        j[3] = -ly * s0 + h * c0;
        j[4] = dh1 * s0;
        j[5] = dh2 * s0;
        j[6] = ly * c0 + h * s0;
        j[7] = -dh1 * c0;
        j[8] = -dh2 * c0;
    }
}

int32_t mk_leg_inverse(const mk_legs *g, const double *p, double *q, uint8_t *clipped)
{
    const double two_pi = 2.0 * PI;
    const double l2 = g->l2, l3 = g->l3;
    const double d_max = (l2 + l3) * 0.9999;
    const double d_min = fabs(l2 - l3) * 1.0001 + 1e-6;
    int32_t count = 0;
    for (int32_t l = 0; l < g->legs; l++) {
        double x = p[3 * l] - g->hip[3 * l];
        const double y = p[3 * l + 1] - g->hip[3 * l + 1];
        const double z = p[3 * l + 2] - g->hip[3 * l + 2];
        const double ly = g->side[l] * g->l1;
        /* Abad: (y, z) is (ly, -h) rotated by q0. */
        const double yz2 = y * y + z * z;
        const double inner = yz2 - ly * ly;
        double h = sqrt(inner > 1e-12 ? inner : 1e-12);
        int bad = yz2 < ly * ly;
        double q0 = fmod(atan2(z, y) - atan2(-h, ly) + PI, two_pi);
        if (q0 < 0.0) q0 += two_pi;
        q0 -= PI;
        /* Hip and knee in the leg plane, the target pulled onto the
         * reachable shell along its direction. */
        const double d = hypot(x, h);
        bad |= d > d_max || d < d_min;
        const double d_c = mk_clamp(d, d_min, d_max);
        const double scale = d > 0.0 ? d_c / (d > 1e-12 ? d : 1e-12) : 1.0;
        x *= scale;
        h *= scale;
        const double cos_k = (d_c * d_c - l2 * l2 - l3 * l3) / (2.0 * l2 * l3);
        const double q2 = acos(mk_clamp(cos_k, -1.0, 1.0));
        double *out = q + 3 * l;
        out[0] = q0;
        out[1] = atan2(x, h) - atan2(l3 * sin(q2), l2 + l3 * cos(q2));
        out[2] = q2;
        clipped[l] = (uint8_t)bad;
        count += bad;
    }
    return count;
}

/* The locomotion's feet to the kernel in one call: the joints for the feet
 * (mk_leg_inverse, its flags in clipped), each clamped `margin` inside the
 * limits with fallback[i] for a non-finite angle (mk_inside_limits), and
 * streamed as the tick's set points with the velocity from q_prev
 * (mk_stream). q (legs x 3) receives the clamped joints; plan->n must be
 * 3 x legs. Returns how many feet were out of reach. */
int32_t mk_leg_targets(const mk_legs *g, const double *feet, const double *fallback,
                       const double *q_min, const double *q_max, double margin,
                       const mk_plan *plan, const double *q_prev, double dt, double *q,
                       uint8_t *clipped)
{
    const int32_t out_of_reach = mk_leg_inverse(g, feet, q, clipped);
    mk_inside_limits(3 * g->legs, q, fallback, q_min, q_max, margin, q);
    mk_stream(plan, q, q_prev, dt);
    return out_of_reach;
}
