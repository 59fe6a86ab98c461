/* One tick of the closed-loop trot's arithmetic (controller/motion/balance.py,
 * whose docstring describes it): the reference carried on by the commanded
 * velocity within a slack of the estimate, the feet and the legs on the
 * ground for the MPC's request, then the plan's forces (or the weight shared
 * by the feet that are down) as joint torques, and the landing feedback.
 * Here because it runs every tick and Python's per-operation cost on 3-vectors
 * dominated it. No allocation (see kernel.h). */
#include "kernel.h"

#include <math.h>
#include <stddef.h>

static const double PI = 3.14159265358979323846;

/* a wrapped to [-pi, pi), the floor-modulo way (as Python's % does). */
static double wrap(double a)
{
    const double period = 2.0 * PI;
    double m = fmod(a + PI, period);
    if (m < 0.0)
        m += period;
    return m - PI;
}

void mk_balance_reference(mk_balance *b)
{
    const double *r = b->rot, *co = b->com_offset, *x = b->x, *v = b->v;
    b->yaw = atan2(r[3], r[0]);
    double offset[3];
    for (int i = 0; i < 3; i++) {
        offset[i] = r[3 * i] * co[0] + r[3 * i + 1] * co[1] + r[3 * i + 2] * co[2];
        b->com[i] = x[i] + offset[i];
    }
    const double vx = v[0], vy = v[1], wz = v[2];
    b->cos_yaw = cos(b->yaw);
    b->sin_yaw = sin(b->yaw);
    const double cy = b->cos_yaw, sy = b->sin_yaw;
    b->v_world[0] = cy * vx - sy * vy;
    b->v_world[1] = sy * vx + cy * vy;
    b->v_world[2] = 0.0;
    double *p = b->p_des;
    if (!b->started) {
        b->yaw_des = b->yaw;
        for (int i = 0; i < 3; i++)
            p[i] = b->com[i];
        b->started = 1;
    }
    b->yaw_des = b->yaw + mk_clamp(wrap(b->yaw_des + wz * b->dt - b->yaw), -b->yaw_slack, b->yaw_slack);
    for (int k = 0; k < 2; k++) {
        const double near = b->com[k];
        p[k] = mk_clamp(p[k] + b->v_world[k] * b->dt, near - b->position_slack, near + b->position_slack);
    }
    p[2] = b->height + offset[2];
    for (int32_t leg = 0; leg < b->legs; leg++) {
        for (int i = 0; i < 3; i++)
            b->feet[3 * leg + i] = b->est_feet[3 * leg + i];
        b->feet[3 * leg + 2] -= b->foot_radius;
        const int64_t t = b->swing_tick[leg];
        b->down[leg] = !(b->swinging[leg] && t > 0 && t < b->swing_ticks[leg]);
    }
}

int32_t mk_balance_torques(mk_balance *b)
{
    const int32_t legs = b->legs;
    double *f = b->forces;
    int32_t down = 0;
    for (int32_t leg = 0; leg < legs; leg++)
        down += b->down[leg] != 0;
    for (int32_t leg = 0; leg < legs; leg++)
        for (int i = 0; i < 3; i++) {
            double fi = 0.0;
            if (b->down[leg])
                fi = b->plan_forces ? b->plan_forces[3 * leg + i] : (i == 2 ? b->weight / down : 0.0);
            f[3 * leg + i] = fi;
        }
    /* tau = -J^T R^T f: the foot pushes the ground with -f. */
    const double *r = b->rot;
    for (int32_t leg = 0; leg < legs; leg++) {
        const double *fl = f + 3 * leg, *J = b->jacobian + 9 * leg;
        double push[3];
        for (int j = 0; j < 3; j++)
            push[j] = -(fl[0] * r[j] + fl[1] * r[3 + j] + fl[2] * r[6 + j]);
        for (int i = 0; i < 3; i++) {
            const int32_t k = 3 * leg + i;
            b->tau[k] = J[i] * push[0] + J[3 + i] * push[1] + J[6 + i] * push[2];
            b->tau_ff[k] = mk_clamp(b->tau[k], -b->torque_limit[k], b->torque_limit[k]);
        }
    }
    /* Landing feedback from the estimated velocity, level heading frame. */
    const double ux = b->x[3], uy = b->x[4], cy = b->cos_yaw, sy = b->sin_yaw;
    b->placement[0] = b->placement_gain * (cy * ux + sy * uy - b->v[0]);
    b->placement[1] = b->placement_gain * (-sy * ux + cy * uy - b->v[1]);
    /* ... and, in a motion gait, from where the centre of mass is against the
     * reference: a body ahead of its reference lands its feet further ahead,
     * which stops it. */
    if (b->position_gain > 0.0) {
        const double ex = b->com[0] - b->p_des[0], ey = b->com[1] - b->p_des[1];
        const double g = b->position_gain, reach = b->position_reach;
        b->placement[0] += mk_clamp(g * (cy * ex + sy * ey), -reach, reach);
        b->placement[1] += mk_clamp(g * (-sy * ex + cy * ey), -reach, reach);
    }
    /* ... and the body's height error, which a swing foot answers so that its
     * clearance is over the ground (the reference swings its feet in the
     * world), not under a body that sank below its height. */
    b->placement[2] = b->level_reach > 0.0
        ? mk_clamp(b->x[2] - b->height, -b->level_reach, b->level_reach) : 0.0;
    return b->plan_forces == NULL;
}
