/* Joint targets inside the joint limits (controller/behaviours/base.py,
 * Robot.inside_limits): a non-finite target is replaced by the fallback
 * (the measured angle), then each is clamped `margin` rad inside
 * [q_min, q_max]. A NaN fallback stays NaN, as it did in numpy. No allocation (see kernel.h). */
#include "kernel.h"

#include <math.h>

void mk_inside_limits(int32_t n, const double *q, const double *fallback, const double *q_min,
                      const double *q_max, double margin, double *out)
{
    for (int32_t i = 0; i < n; i++) {
        double v = isfinite(q[i]) ? q[i] : fallback[i];
        /* The lower bound, then the upper, as numpy's maximum then minimum
         * did: the upper wins should a margin leave no room between them, and
         * a value equal to a bound becomes the bound (0.0 for a -0.0). */
        const double lo = q_min[i] + margin, hi = q_max[i] - margin;
        if (v <= lo) v = lo;
        if (v >= hi) v = hi;
        out[i] = v;
    }
}
