/* One tick of every leg of the open-loop gait generator
 * (controller/motion/gait.py, whose docstring describes the gait): stance
 * feet fixed in the world, swings lifting off when the timetable says and
 * landing on their own clock at a Raibert point kept inside the half-stride
 * ellipse, then the feet in the pitched body frame. Here because it runs
 * every tick over a few legs, where Python's per-call cost dominates.
 * No allocation (see kernel.h). */
#include "kernel.h"

#include <math.h>

static double min_jerk(double s)
{
    return s * s * s * (10.0 + s * (-15.0 + 6.0 * s));
}

static double bump(double s)
{
    return 64.0 * pow(s * (1.0 - s), 3.0);
}

void mk_gait_legs(mk_gait *g)
{
    const double dt = g->dt, vx = g->vx, vy = g->vy, wz = g->wz;
    const double c = cos(g->pitch), s = sin(g->pitch);
    for (int32_t leg = 0; leg < g->legs; leg++) {
        const double nx = g->nominal[2 * leg] * g->length;
        const double ny = g->nominal[2 * leg + 1] * g->width;
        double fx = g->feet[2 * leg], fy = g->feet[2 * leg + 1];
        int swinging = g->swinging[leg] != 0, landed = 0;
        if (swinging) {                    /* swings land on their own clock */
            g->swing_tick[leg] += 1;
            if (g->swing_tick[leg] >= g->swing_ticks[leg]) {
                fx = g->landing[2 * leg];
                fy = g->landing[2 * leg + 1];
                swinging = 0;
                landed = 1;
            }
        }
        if (!swinging) {                   /* stance: fixed in the world */
            const double sx = fx - (vx - wz * fy) * dt;
            const double sy = fy - (vy + wz * fx) * dt;
            fx = sx;
            fy = sy;
            /* The timetable wants a swing: lift off, unless its window is
             * mostly over (e.g. just after a gait switch). */
            const double start = g->run_start[leg], length = g->run_len[leg];
            if (g->stance_now[leg] == 0.0 && !landed && start <= (1.0 - g->min_swing_share) * length) {
                swinging = 1;
                g->swing_tick[leg] = 0;
                const int64_t ticks = (int64_t)(length - start);
                g->swing_ticks[leg] = ticks > 1 ? ticks : 1;
                g->lift[2 * leg] = fx;
                g->lift[2 * leg + 1] = fy;
                g->swing_apex[leg] = g->apex[leg];
            }
        }
        g->swinging[leg] = (uint8_t)swinging;
        /* Landing point: Raibert at the current velocity, plus a user gait's
         * offset, kept inside the reachable half-stride. */
        double lx = g->half[leg] * (vx - wz * ny) + g->fbx;
        double ly = g->half[leg] * (vy + wz * nx) + g->fby;
        if (g->has_offset) {
            lx = lx + g->offset[2 * leg];
            ly = ly + g->offset[2 * leg + 1];
        }
        const double reach = hypot(lx / g->rx, ly / g->ry);
        if (reach > 1.0) {
            lx = lx / reach;
            ly = ly / reach;
        }
        g->landing[2 * leg] = nx + lx;
        g->landing[2 * leg + 1] = ny + ly;
        double lift = 0.0;                 /* a foot on the ground */
        if (swinging) {
            const double share = (double)g->swing_tick[leg] / (double)g->swing_ticks[leg];
            const double m = min_jerk(share);
            const double ox = g->lift[2 * leg], oy = g->lift[2 * leg + 1];
            fx = ox + (nx + lx - ox) * m;
            fy = oy + (ny + ly - oy) * m;
            lift = g->swing_apex[leg] * bump(share);
        }
        g->feet[2 * leg] = fx;
        g->feet[2 * leg + 1] = fy;
        /* The body pitches about its origin; the feet stay where they are in
         * the level frame, so in the body frame they turn the other way. */
        const double z = -(g->height - g->foot_radius) + lift;
        double *out = g->out + 3 * leg;
        out[0] = c * fx - s * z;
        out[1] = fy;
        out[2] = s * fx + c * z;
    }
}
