/* The tracking-error watch's per-tick count (controller/core/faults.py,
 * TrackingWatch): a joint farther than `bound` from the position the last
 * tick commanded, while its kp is at least `min_kp`, adds one to its run of
 * ticks; any other joint's run restarts at 0. No allocation (see kernel.h). */
#include "kernel.h"

#include <math.h>

int32_t mk_tracking_check(int32_t n, const double *q, const double *target, const double *kp,
                          double bound, double min_kp, int64_t ticks, int64_t *over, double *err)
{
    int64_t longest = 0;
    for (int32_t i = 0; i < n; i++) {
        const double e = fabs(q[i] - target[i]);
        err[i] = e;
        over[i] = (e > bound && kp[i] >= min_kp) ? over[i] + 1 : 0;
        if (over[i] > longest) longest = over[i];
    }
    if (longest < ticks) return -1;
    /* Of the joints whose run is long enough, the farthest (the first of equals). */
    int32_t joint = -1;
    double worst = -1.0;
    for (int32_t i = 0; i < n; i++)
        if (over[i] >= ticks && err[i] > worst) {
            joint = i;
            worst = err[i];
        }
    return joint;
}

/* SPEC 5.8/5.9's foot workspace check (controller/core/fsm.py): per leg l,
 * the foot relative to its hip (body frame, legs x 3 row-major); bit 3l set
 * when |x| > x_limit, bit 3l + 2 when z > z_limit or x^2 + z^2 > far. */
int32_t mk_foot_workspace_bits(int32_t legs, const double *feet, const double *hip,
                               double x_limit, double z_limit, double far)
{
    int32_t bits = 0;
    for (int32_t l = 0; l < legs; l++) {
        const double x = feet[3 * l] - hip[3 * l];
        const double z = feet[3 * l + 2] - hip[3 * l + 2];
        if (fabs(x) > x_limit) bits |= 1 << (3 * l);
        if (z > z_limit || x * x + z * z > far) bits |= 1 << (3 * l + 2);
    }
    return bits;
}
