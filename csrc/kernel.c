/* motiond interpolation kernel; see kernel.h. */
#include "kernel.h"

#include <math.h>

static double clamp01(double s)
{
    if (!(s > 0.0)) return 0.0; /* also catches NaN */
    if (s > 1.0) return 1.0;
    return s;
}

/* Position and velocity of one segment at normalised time s in [0, 1]. */
static void eval_segment(int32_t profile, double q0, double q1, double v0, double v1,
                         double dur, double s, double *pos, double *vel)
{
    const double dq = q1 - q0;
    if (dur <= 0.0) {           /* a set point, with v1 as velocity feed-forward */
        *pos = q1;
        *vel = v1;
        return;
    }
    if (s >= 1.0) {             /* the segment is over: hold its end */
        *pos = q1;
        *vel = 0.0;
        return;
    }
    switch (profile) {
    case MK_CUBIC: {
        /* Hermite basis with tangents scaled by the segment duration. */
        const double s2 = s * s, s3 = s2 * s;
        const double m0 = v0 * dur, m1 = v1 * dur;
        *pos = (2 * s3 - 3 * s2 + 1) * q0 + (s3 - 2 * s2 + s) * m0
             + (-2 * s3 + 3 * s2) * q1 + (s3 - s2) * m1;
        *vel = ((6 * s2 - 6 * s) * q0 + (3 * s2 - 4 * s + 1) * m0
              + (-6 * s2 + 6 * s) * q1 + (3 * s2 - 2 * s) * m1) / dur;
        return;
    }
    case MK_QUINTIC: {
        const double s2 = s * s, s3 = s2 * s;
        *pos = q0 + dq * (s3 * (10.0 + s * (-15.0 + 6.0 * s)));
        *vel = dq / dur * (s2 * (30.0 + s * (-60.0 + 30.0 * s)));
        return;
    }
    default: /* MK_LINEAR */
        *pos = q0 + dq * s;
        *vel = dq / dur;
        return;
    }
}

int32_t mk_step(const mk_plan *p, double t)
{
    int32_t flagged = 0;
    for (int32_t i = 0; i < p->n; i++) {
        double pos, vel;
        const double dur = p->dur[i];
        const double s = dur > 0.0 ? clamp01((t - p->t0[i]) / dur) : 1.0;
        eval_segment(p->profile[i], p->q0[i], p->q1[i], p->v0[i], p->v1[i], dur, s, &pos, &vel);

        int bad = 0;
        if (!isfinite(pos) || !isfinite(vel)) {
            pos = isfinite(p->q0[i]) ? p->q0[i] : 0.5 * (p->q_min[i] + p->q_max[i]);
            vel = 0.0;
            bad = 1;
        }
        const double step = p->step_max[i];
        const double prev = p->pos[i];
        if (step > 0.0 && isfinite(prev)) {
            if (pos > prev + step) { pos = prev + step; bad = 1; }
            if (pos < prev - step) { pos = prev - step; bad = 1; }
        }
        if (pos < p->q_min[i]) { pos = p->q_min[i]; if (vel < 0.0) vel = 0.0; bad = 1; }
        if (pos > p->q_max[i]) { pos = p->q_max[i]; if (vel > 0.0) vel = 0.0; bad = 1; }
        if (vel > p->v_max[i]) { vel = p->v_max[i]; bad = 1; }
        if (vel < -p->v_max[i]) { vel = -p->v_max[i]; bad = 1; }

        const double g_dur = p->g_dur[i];
        const double g = g_dur > 0.0 ? clamp01((t - p->g_t0[i]) / g_dur) : 1.0;
        double kp = p->kp0[i] + (p->kp1[i] - p->kp0[i]) * g;
        double kd = p->kd0[i] + (p->kd1[i] - p->kd0[i]) * g;
        double tau = p->tau_ff[i];
        if (!isfinite(kp) || kp < 0.0) { kp = 0.0; bad = 1; }
        if (!isfinite(kd) || kd < 0.0) { kd = 0.0; bad = 1; }
        if (!isfinite(tau)) { tau = 0.0; bad = 1; }

        p->pos[i] = pos;
        p->vel[i] = vel;
        p->kp[i] = kp;
        p->kd[i] = kd;
        p->tau[i] = tau;
        flagged += bad;
    }
    return flagged;
}

/* A target computed every tick (controller/robot/native.py, Kernel.stream):
 * every joint's segment becomes a set point at q carrying the velocity that
 * reached it from q_prev one tick (dt) ago. The plan's segment arrays are
 * the caller's writable buffers (const only for mk_step). */
void mk_stream(const mk_plan *p, const double *q, const double *q_prev, double dt)
{
    double *t0 = (double *)p->t0, *dur = (double *)p->dur;
    double *q0 = (double *)p->q0, *q1 = (double *)p->q1;
    double *v0 = (double *)p->v0, *v1 = (double *)p->v1;
    int32_t *profile = (int32_t *)p->profile;
    for (int32_t i = 0; i < p->n; i++) {
        q0[i] = q[i];
        q1[i] = q[i];
        v0[i] = 0.0;
        v1[i] = (q[i] - q_prev[i]) / dt;
        t0[i] = 0.0;
        dur[i] = 0.0;
        profile[i] = MK_LINEAR;
    }
}
