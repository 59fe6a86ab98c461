/* The tracking-error watch's per-tick count (controller/core/faults.py,
 * TrackingWatch): a joint farther than `bound` from the position the last
 * tick commanded, while its kp is at least `min_kp`, adds one to its run of
 * ticks; any other joint's run restarts at 0. No allocation (see kernel.h). */
#include "kernel.h"

#include <math.h>
#include <stddef.h>

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

/* Clamp, min and abs as numpy's clip and minimum do them: a NaN stays NaN. */
static double clamp_nan(double x, double lo, double hi)
{
    return x < lo ? lo : (x > hi ? hi : x);
}

static double min_nan(double a, double b)
{
    return (a < b || isnan(a)) ? a : b;
}

/* |torque| the driver's law gives for one command at q, qd, inside the
 * range the motor can give this tick (w->low, w->high). */
static void sensor_law(const mk_sensor_watch *w, const double *q, const double *qd, const double *pos,
                       const double *vel, const double *kp, const double *kd, const double *tau_ff,
                       double *out)
{
    for (int32_t i = 0; i < w->n; i++) {
        double law = kp[i] * (pos[i] - q[i]) + kd[i] * (vel[i] - qd[i]);
        law += tau_ff[i];
        out[i] = fabs(clamp_nan(law, w->low[i], w->high[i]));
    }
}

/* The sensor watch's joint checks (controller/core/sensor_watch.py has the
 * rules), on the joint_state that arrived this tick, `ticks` after the one
 * before, against the command the driver has run on since (pos vel kp kd
 * tau_ff) and the one before it. Returns what it found (MK_SENSOR_*) with
 * the joint in *joint and, for a jump, how far it moved and its step beyond
 * the allowance in detail[0] and [1]; for a weak motor, the share it gave in
 * detail[0]. No allocation. */
int32_t mk_sensor_joints(mk_sensor_watch *w, const double *q, const double *qd, const double *tau,
                         const double *pos, const double *vel, const double *kp, const double *kd,
                         const double *tau_ff, int64_t ticks, int32_t *joint, double *detail)
{
    const int32_t n = w->n;
    double *prev = w->prev, *was = w->scratch;
    const int32_t had_prev = w->have_prev;
    for (int32_t i = 0; i < n; i++) {
        was[i] = prev[i];
        prev[i] = q[i];
    }
    w->have_prev = 1;
    *joint = -1;
    if (!had_prev) return MK_SENSOR_OK;
    /* A jump: the largest step (the first of equals; a NaN step anywhere is
     * none), less what the joints' speed allowed over the ticks between
     * readings beyond the first. */
    int32_t jumped = 0, nan_step = 0;
    double largest = 0.0;
    for (int32_t i = 0; i < n; i++) {
        double step = fabs(q[i] - was[i]);
        if (ticks > 1) step -= (double)(ticks - 1) * w->per_tick[i];
        if (isnan(step)) nan_step = 1;
        if (i == 0 || step > largest) {
            jumped = i;
            largest = step;
        }
    }
    if (!nan_step && largest > w->jump_rad) {
        *joint = jumped;
        detail[0] = fabs(q[jumped] - was[jumped]);
        detail[1] = largest;
        return MK_SENSOR_JUMP;
    }
    /* Frozen: the same angle to the last bit while stiff, far from target. */
    int32_t frozen = -1;
    for (int32_t i = 0; i < n; i++) {
        w->same[i] = (q[i] == was[i] && kp[i] >= w->min_kp) ? w->same[i] + ticks : 0;
        if (frozen < 0 && w->same[i] >= w->freeze_ticks && fabs(pos[i] - q[i]) > w->freeze_error)
            frozen = i;
    }
    if (frozen >= 0) {
        *joint = frozen;
        return MK_SENSOR_FROZEN;
    }
    /* What the law asked: inside the torque limit, or the motor's envelope
     * at this speed when the config knows it; the smaller of this command's
     * and the one before's. The driver runs its law on a command a tick or
     * so after it was sent (the bus), so what it gave since the last reading
     * may be either's (on real motors with a 2-3 ms delay Go2's trot read
     * 50-56 % against this command alone, 70-75 % against either). */
    if (w->knee != NULL && w->no_load != NULL)
        for (int32_t i = 0; i < n; i++) {
            const double share = (w->no_load[i] - fabs(qd[i])) / (w->no_load[i] - w->knee[i]);
            const double driving = w->limit[i] * clamp_nan(share, 0.0, 1.0);
            w->high[i] = qd[i] > 0.0 ? driving : w->limit[i];
            w->low[i] = qd[i] < 0.0 ? -driving : -w->limit[i];
        }
    double *asked = w->law_now, *b = w->before;
    sensor_law(w, q, qd, pos, vel, kp, kd, tau_ff, asked);
    if (w->have_before) {
        sensor_law(w, q, qd, b, b + n, b + 2 * n, b + 3 * n, b + 4 * n, w->law_before);
        for (int32_t i = 0; i < n; i++) asked[i] = min_nan(asked[i], w->law_before[i]);
    }
    for (int32_t i = 0; i < n; i++) {
        b[i] = pos[i];
        b[n + i] = vel[i];
        b[2 * n + i] = kp[i];
        b[3 * n + i] = kd[i];
        b[4 * n + i] = tau_ff[i];
    }
    w->have_before = 1;
    /* A weak motor, over the last torque_ticks readings. */
    double *asked_row = w->asked_line + w->slot * n, *given_row = w->given_line + w->slot * n;
    int32_t any_full = 0;
    for (int32_t i = 0; i < n; i++) {
        const double given = fabs(tau[i]);
        const int32_t nothing = given < w->dead_share * asked[i];
        const int32_t counting = kp[i] >= w->min_kp && asked[i] >= w->torque_min &&
                                 (fabs(qd[i]) < w->torque_speed || nothing);
        w->counted[i] = counting ? w->counted[i] + 1 : 0;
        asked_row[i] = asked[i];
        given_row[i] = given;
        if (w->counted[i] >= w->torque_ticks) any_full = 1;
    }
    w->slot = (w->slot + 1) % w->torque_ticks;
    if (!any_full) return MK_SENSOR_OK;
    for (int32_t i = 0; i < n; i++) {
        if (w->counted[i] < w->torque_ticks) continue;
        double asked_sum = 0.0, given_sum = 0.0;
        for (int64_t r = 0; r < w->torque_ticks; r++) {
            asked_sum += w->asked_line[r * n + i];
            given_sum += w->given_line[r * n + i];
        }
        if (given_sum < w->torque_share * asked_sum) {
            *joint = i;
            detail[0] = given_sum / asked_sum;
            return MK_SENSOR_WEAK;
        }
    }
    return MK_SENSOR_OK;
}
