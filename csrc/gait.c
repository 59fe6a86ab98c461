/* One tick of the open-loop gait generator (controller/motion/gait.py,
 * whose docstring describes the gait): the commanded velocity inside the
 * gait's window, limited by what the stance feet can reach and by the
 * gait's accelerations; then every leg: stance feet fixed in the world,
 * swings lifting off when the timetable says and landing on their own clock
 * at a Raibert point kept inside the half-stride ellipse, and the feet in
 * the pitched body frame. Here because it runs every tick over a few legs,
 * where Python's per-call cost dominates. No allocation (see kernel.h). */
#include "kernel.h"

#include <math.h>

static double min_jerk(double s)
{
    return s * s * s * (10.0 + s * (-15.0 + 6.0 * s));
}

/* A swing's rise out of the floor its loaded foot sank into (and its fall
 * back into it): 0 at lift-off and at touch-down, 1 from SINK_SHARE of the
 * swing to SINK_SHARE before its end, smooth. */
#define SINK_SHARE 0.15

static double out_of_floor(double s)
{
    double x = (s < 1.0 - s ? s : 1.0 - s) / SINK_SHARE;
    if (x >= 1.0)
        return 1.0;
    if (x <= 0.0)
        return 0.0;
    return x * x * (3.0 - 2.0 * x);
}

static double bump(double s)
{
    return 64.0 * pow(s * (1.0 - s), 3.0);
}

void mk_gait_target(mk_gait *g)
{
    double *t = g->target;
    if (g->zero_target) {
        t[0] = t[1] = t[2] = 0.0;
        return;
    }
    const double *lo = g->lo, *hi = g->hi;
    for (int i = 0; i < 3; i++)
        t[i] = mk_clamp(g->cmd[i], lo[i], hi[i]);
    double x_max = -lo[0] > hi[0] ? -lo[0] : hi[0];
    if (x_max < 1e-9)
        x_max = 1e-9;
    const double full = fabs(t[0]) / x_max;
    const double share = 1.0 - g->cross_coupling * (full < 1.0 ? full : 1.0);
    for (int i = 1; i < 3; i++)
        t[i] = mk_clamp(t[i], lo[i] * share, hi[i] * share);
}

static double stride_ratio(const mk_gait *g, const double *half, double vx, double vy, double wz)
{
    double most = 0.0;
    for (int32_t leg = 0; leg < g->legs; leg++) {
        const double nx = g->nominal[2 * leg], ny = g->nominal[2 * leg + 1], h = half[leg];
        const double dx = (vx - wz * ny) * (h / g->rx);
        const double dy = (vy + wz * nx) * (h / g->ry);
        const double r = dx * dx + dy * dy;
        if (r > most)
            most = r;
    }
    return sqrt(most);
}

double mk_gait_stride_ratio(const mk_gait *g, const double *half, const double *v)
{
    return stride_ratio(g, half, v[0], v[1], v[2]);
}

/* Where a leg is in the timetable now: stance?, ticks into its run, the run's length. */
typedef struct {
    int stance;
    double start, length;
} schedule;

static schedule leg_schedule(const mk_gait *g, int32_t leg)
{
    const int64_t seg_t = g->segment_ticks, segment = g->phase / seg_t;
    const int64_t k = segment * g->legs + leg;
    schedule s = {g->contact[k] != 0, (double)(g->run_start[k] * seg_t + g->phase % seg_t),
                  (double)(g->run_length[k] * seg_t)};
    return s;
}

static void landing_offset(const mk_gait *g, int32_t leg, double *ox, double *oy);

/* The largest share of the target velocity that keeps every stance foot
 * inside the half-stride ellipse until its lift-off (open loop cannot step
 * faster): the foot at p moves to p - s u tau, a quadratic in s per foot. */
static double stance_reach(const mk_gait *g, double tx, double ty, double tw)
{
    double scale = 1.0;
    for (int32_t leg = 0; leg < g->legs; leg++) {
        const schedule now = leg_schedule(g, leg);
        if (g->swinging[leg] || !now.stance)
            continue;
        const double px = g->feet[2 * leg], py = g->feet[2 * leg + 1];
        const double nx = g->nominal[2 * leg], ny = g->nominal[2 * leg + 1];
        /* A gait's landing offset moves the ellipse's centre with the feet. */
        double ox, oy;
        landing_offset(g, leg, &ox, &oy);
        const double tau = (now.length - now.start) * g->dt;
        const double wx = (tx - tw * py) * tau / g->rx, wy = (ty + tw * px) * tau / g->ry;
        const double dx = (px - nx * g->length - ox) / g->rx, dy = (py - ny * g->width - oy) / g->ry;
        const double a = wx * wx + wy * wy;
        const double b = dx * wx + dy * wy;
        const double c = dx * dx + dy * dy - 1.0;
        double s;
        if (c > 0.0)             /* already outside: only motion back inward */
            s = b > 0.0 ? 0.0 : 1.0;
        else if (a > 1e-12) {
            const double d = b * b - a * c;
            s = (b + sqrt(d > 0.0 ? d : 0.0)) / a;
        } else
            s = 1.0;
        if (s < scale)
            scale = s;
    }
    return mk_clamp(scale, 0.0, 1.0);
}

static void gait_legs(mk_gait *g);

/* A gait's landing offset of one leg, kept inside the reachable
 * half-stride (a larger one, e.g. the ballet's 10 cm toward the centre
 * line, is scaled back to its edge): the centre the leg's stride is
 * measured from. */
static void landing_offset(const mk_gait *g, int32_t leg, double *ox, double *oy)
{
    *ox = 0.0;
    *oy = 0.0;
    if (!g->has_offset)
        return;
    const double x = g->offset[2 * leg], y = g->offset[2 * leg + 1];
    const double reach = hypot(x / g->rx, y / g->ry);
    const double k = reach > 1.0 ? 1.0 / reach : 1.0;
    *ox = x * k;
    *oy = y * k;
}

void mk_gait_step(mk_gait *g)
{
    double tx = g->target[0], ty = g->target[1], tw = g->target[2];
    if (!g->timing_stand) {
        const double ratio = stride_ratio(g, g->half, tx, ty, tw);
        if (ratio > 1.0) {
            tx = tx / ratio;
            ty = ty / ratio;
            tw = tw / ratio;
        }
        const double scale = stance_reach(g, tx, ty, tw);
        tx = tx * scale;
        ty = ty * scale;
        tw = tw * scale;
    }
    /* Rate limits toward the target: x_up while |vx| grows, x_down otherwise. */
    double *v = g->v;
    const double vx = v[0], vy = v[1], wz = v[2], dt = g->dt;
    const int growing = fabs(tx) > fabs(vx) && tx * vx >= 0.0;
    const double ax = (growing ? g->ax_up : g->ax_down) * dt;
    v[0] = vx + mk_clamp(tx - vx, -ax, ax);
    v[1] = vy + mk_clamp(ty - vy, -g->ay * dt, g->ay * dt);
    v[2] = wz + mk_clamp(tw - wz, -g->ayaw * dt, g->ayaw * dt);
    gait_legs(g);
}

static void gait_legs(mk_gait *g)
{
    const double dt = g->dt, vx = g->v[0], vy = g->v[1], wz = g->v[2];
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
             * mostly over (e.g. just after a gait switch) or the gait is
             * stopping with its feet down (hold_down). */
            const schedule now = leg_schedule(g, leg);
            const double start = now.start, length = now.length;
            if (!now.stance && !landed && !g->hold_down
                && start <= (1.0 - g->min_swing_share) * length) {
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
        /* Landing point: Raibert at the current velocity kept inside the
         * reachable half-stride, plus a gait's landing offset (which moves
         * the half-stride's centre, as in stance_reach). */
        double lx = g->half[leg] * (vx - wz * ny) + g->feedback[0];
        double ly = g->half[leg] * (vy + wz * nx) + g->feedback[1];
        const double reach = hypot(lx / g->rx, ly / g->ry);
        if (reach > 1.0) {
            lx = lx / reach;
            ly = ly / reach;
        }
        double ox, oy;
        landing_offset(g, leg, &ox, &oy);
        lx = lx + ox;
        ly = ly + oy;
        g->landing[2 * leg] = nx + lx;
        g->landing[2 * leg + 1] = ny + ly;
        double lift = 0.0;                 /* a foot on the ground */
        if (swinging) {
            /* a swing's height is over the ground: a body below its height
             * (feedback[2] < 0) draws the foot up by as much */
            const double share = (double)g->swing_tick[leg] / (double)g->swing_ticks[leg];
            const double m = min_jerk(share);
            const double ox = g->lift[2 * leg], oy = g->lift[2 * leg + 1];
            fx = ox + (nx + lx - ox) * m;
            fy = oy + (ny + ly - oy) * m;
            /* the apex is over the floor's surface: a foot that sank into
             * it rises out first, before its stride is under way */
            lift = g->swing_apex[leg] * bump(share) + g->sink * out_of_floor(share) - g->feedback[2];
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
