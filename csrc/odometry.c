/* The per-tick arithmetic of the quadruped's state estimate
 * (controller/core/estimator.py, whose docstring gives the filter): from
 * this tick's joints, joint torques and IMU, the body orientation, each
 * foot's position, Jacobian and load, how far each leg is trusted, the
 * Kalman filter's prediction of position and velocity, and its
 * measurement vector and noise. The covariance arithmetic that follows is
 * kalman.c's. No allocation: every buffer is the caller's (see kernel.h). */
#include "kernel.h"

#include <math.h>

/* rot = Rz(-drift) R(quat): the body-to-world rotation of unit quaternion
 * (w, x, y, z) with the IMU's yaw drift taken off. */
static void rotation(const double *quat, double drift, double *r)
{
    const double w = quat[0], x = quat[1], y = quat[2], z = quat[3];
    double m[9];
    m[0] = 1 - 2 * (y * y + z * z);
    m[1] = 2 * (x * y - w * z);
    m[2] = 2 * (x * z + w * y);
    m[3] = 2 * (x * y + w * z);
    m[4] = 1 - 2 * (x * x + z * z);
    m[5] = 2 * (y * z - w * x);
    m[6] = 2 * (x * z - w * y);
    m[7] = 2 * (y * z + w * x);
    m[8] = 1 - 2 * (x * x + y * y);
    const double c = cos(drift), s = sin(drift);
    for (int k = 0; k < 3; k++) {
        r[k] = c * m[k] + s * m[3 + k];
        r[3 + k] = c * m[3 + k] - s * m[k];
        r[6 + k] = m[6 + k];
    }
}

/* out = r v (transpose: r^T v) */
static void turn(const double *r, const double *v, double *out, int transpose)
{
    for (int i = 0; i < 3; i++)
        out[i] = transpose ? r[i] * v[0] + r[3 + i] * v[1] + r[6 + i] * v[2]
                           : r[3 * i] * v[0] + r[3 * i + 1] * v[1] + r[3 * i + 2] * v[2];
}

void mk_odometry_step(mk_odometry *o)
{
    const mk_legs *g = o->geometry;
    const int32_t legs = g->legs;
    const double *w = o->gyro;
    double *rot = o->rot;
    rotation(o->quat, o->yaw_drift, rot);

    /* Feet and Jacobians (body frame), then each leg's push from its
     * torques, tau = J^T f; the ground pushes back with -f (world frame). */
    mk_leg_forward(g, o->q, o->feet, o->jacobian);
    mk_leg_forces(legs, o->jacobian, o->tau, o->leg_force);
    for (int32_t l = 0; l < legs; l++) {
        double f[3], neg[3];
        for (int k = 0; k < 3; k++) neg[k] = -o->leg_force[3 * l + k];
        turn(rot, neg, f, 0);
        for (int k = 0; k < 3; k++) o->force[3 * l + k] = f[k];
        double t = (f[2] - (o->contact_force - o->contact_band)) / o->contact_band;
        t = (t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t)) * o->planned[l];
        /* A foot that has just landed may still slide: believed fully only
         * once it has carried load for settle_ticks. */
        o->contact_age[l] = t > 0.0 ? o->contact_age[l] + 1.0 : 0.0;
        if (o->contact_age[l] < o->settle_ticks)
            t *= o->contact_age[l] / o->settle_ticks;
        o->trust[l] = t;
    }

    /* The first tick: the body above the feet's mean, each foot where it is. */
    double *x = o->x;
    if (!o->initialised) {
        double mean_z = 0.0;
        for (int32_t l = 0; l < legs; l++) {
            double fw[3];
            turn(rot, o->feet + 3 * l, fw, 0);
            mean_z += fw[2];
        }
        for (int32_t i = 0; i < 6 + 3 * legs; i++) x[i] = 0.0;
        x[2] = -mean_z / legs + g->foot_radius;
        for (int32_t l = 0; l < legs; l++) {
            double fw[3];
            turn(rot, o->feet + 3 * l, fw, 0);
            for (int k = 0; k < 3; k++) x[6 + 3 * l + k] = fw[k] + x[k];
        }
        o->initialised = 1;
    }

    /* Predict: the IMU's specific force in the world frame plus gravity. */
    const double dt = o->dt;
    double a[3];
    turn(rot, o->accel, a, 0);
    a[2] -= o->gravity;
    for (int k = 0; k < 3; k++) {
        x[k] += x[3 + k] * dt + 0.5 * dt * dt * a[k];
        x[3 + k] += a[k] * dt;
    }
    for (int k = 0; k < 6; k++) o->Q[k] = o->Q0[k];

    /* Measure, per leg: the foot relative to the body, the body velocity
     * seen from a foot that stands still, and the foot's height. The foot
     * is a ball that rolls: its contact point stands still, a radius below
     * its centre, and the shank's turning (the abad about x; hip + knee,
     * negative, about the abad-turned y) moves the centre over it. A soft
     * foot squashed by its load still rolls on about its own radius (a
     * tyre's rolling radius is near its free one), not on the height its
     * loaded centre stands at: roll_radius. */
    double down[3];          /* centre -> contact, body frame: -radius x (world z in the body) */
    for (int k = 0; k < 3; k++) down[k] = -g->roll_radius * rot[6 + k];
    const int32_t m3 = 3 * legs;
    for (int32_t l = 0; l < legs; l++) {
        const double *p = o->feet + 3 * l;
        const double *J = o->jacobian + 9 * l;
        const double *qd = o->qd + 3 * l;
        double v[3];
        for (int i = 0; i < 3; i++) v[i] = J[3 * i] * qd[0] + J[3 * i + 1] * qd[1] + J[3 * i + 2] * qd[2];
        v[0] += w[1] * p[2] - w[2] * p[1];
        v[1] += w[2] * p[0] - w[0] * p[2];
        v[2] += w[0] * p[1] - w[1] * p[0];
        const double q0 = o->q[3 * l];
        const double bend = -(qd[1] + qd[2]);
        const double sx = w[0] + qd[0];
        const double sy = w[1] + bend * cos(q0);
        const double sz = w[2] + bend * sin(q0);
        v[0] += sy * down[2] - sz * down[1];
        v[1] += sz * down[0] - sx * down[2];
        v[2] += sx * down[1] - sy * down[0];
        double fw[3], vw[3];
        turn(rot, p, fw, 0);
        turn(rot, v, vw, 0);
        const double trust = o->trust[l];
        const double distrust = 1.0 + (1.0 - trust) * o->suspect;
        const double swing = trust < 0.5 ? distrust * o->suspect : 1.0;
        for (int k = 0; k < 3; k++) {
            o->y[3 * l + k] = fw[k];
            o->y[m3 + 3 * l + k] = -vw[k];
            o->R[3 * l + k] = o->R0[3 * l + k] * distrust;
            o->R[m3 + 3 * l + k] = o->R0[m3 + 3 * l + k] * distrust;
            o->Q[6 + 3 * l + k] = o->Q0[6 + 3 * l + k] * swing;
        }
        o->y[2 * m3 + l] = g->foot_radius;
        o->R[2 * m3 + l] = o->R0[2 * m3 + l] * distrust;
    }
}
