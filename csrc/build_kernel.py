"""cffi (API mode) build script for the interpolation kernel.

Used by setup.py (`cffi_modules`) and runnable on its own to build in place:
    python csrc/build_kernel.py
"""
import os
from pathlib import Path

from cffi import FFI

HERE = Path(__file__).resolve().parent
# setuptools wants paths relative to the project root.
REL = os.path.relpath(HERE)

ffibuilder = FFI()
ffibuilder.cdef(
    """
    #define MK_LINEAR 0
    #define MK_CUBIC 1
    #define MK_QUINTIC 2
    typedef struct {
        int32_t n;
        const double *t0; const double *dur;
        const double *q0; const double *q1; const double *v0; const double *v1;
        const int32_t *profile;
        const double *g_t0; const double *g_dur;
        const double *kp0; const double *kp1; const double *kd0; const double *kd1;
        const double *tau_ff;
        const double *q_min; const double *q_max; const double *v_max; const double *step_max;
        double *pos; double *vel; double *kp; double *kd; double *tau;
    } mk_plan;
    int32_t mk_step(const mk_plan *plan, double t);
    void mk_stream(const mk_plan *plan, const double *q, const double *q_prev, double dt);
    int64_t mk_now_ns(void);
    uint32_t mk_crc32_words(const uint32_t *words, int32_t n);
    uint32_t mk_unitree_lowcmd(const double *q, const double *dq, const double *tau, const double *kp,
                               const double *kd, int32_t n, uint8_t *out);
    int mk_sleep_until(int64_t deadline_ns);
    int mk_set_timer_slack(int64_t slack_ns);
    int64_t mk_get_timer_slack(void);
    int mk_lock_memory(void);
    int mk_unlock_memory(void);
    int mk_request_cpu_latency(int32_t max_us);
    typedef struct {
        int32_t n;
        const int32_t *order; const double *direction; const double *offset;
    } mk_joint_map;
    int32_t mk_joint_command_size(int32_t n);
    int32_t mk_encode_joint_command(const mk_plan *plan, const mk_joint_map *map, uint64_t fingerprint,
                                    int64_t utime, int64_t tick, uint8_t *buf, int32_t capacity);
    void mk_kalman_predict(int32_t n, const double *A, double *P, const double *q, double *tmp);
    int32_t mk_kalman_update(int32_t n, int32_t m, double *x, double *P, const double *H,
                             const double *r, const double *y, double *work);
    int32_t mk_leg_forces(int32_t legs, const double *J, const double *tau, double *f);
    int32_t mk_tracking_check(int32_t n, const double *q, const double *target, const double *kp,
                              double bound, double min_kp, int64_t ticks, int64_t *over, double *err);
    #define MK_SENSOR_OK 0
    #define MK_SENSOR_JUMP 1
    #define MK_SENSOR_FROZEN 2
    #define MK_SENSOR_WEAK 3
    typedef struct {
        int32_t n;
        int64_t freeze_ticks, torque_ticks;
        double jump_rad, min_kp, freeze_error, torque_min, torque_speed, torque_share, dead_share;
        const double *per_tick, *limit, *knee, *no_load;
        double *prev, *before, *asked_line, *given_line;
        double *low, *high, *law_now, *law_before, *scratch;
        int64_t *same, *counted;
        int64_t slot;
        int32_t have_prev, have_before;
    } mk_sensor_watch;
    int32_t mk_sensor_joints(mk_sensor_watch *w, const double *q, const double *qd, const double *tau,
                             const double *pos, const double *vel, const double *kp, const double *kd,
                             const double *tau_ff, int64_t ticks, int32_t *joint, double *detail);
    int32_t mk_foot_workspace_bits(int32_t legs, const double *feet, const double *hip,
                                   double x_limit, double z_limit, double far);
    void mk_inside_limits(int32_t n, const double *q, const double *fallback, const double *q_min,
                          const double *q_max, double margin, double *out);
    typedef struct {
        int32_t legs;
        double l1, l2, l3;
        double foot_radius;
        double roll_radius;
        const double *side;
        const double *hip;
    } mk_legs;
    void mk_leg_forward(const mk_legs *g, const double *q, double *p, double *J);
    int32_t mk_leg_inverse(const mk_legs *g, const double *p, double *q, uint8_t *clipped);
    int32_t mk_leg_targets(const mk_legs *g, const double *feet, const double *fallback,
                           const double *q_min, const double *q_max, double margin,
                           const mk_plan *plan, const double *q_prev, double dt, double *q,
                           uint8_t *clipped);
    typedef struct {
        const mk_legs *geometry;
        double dt, gravity;
        double contact_force, contact_band, suspect;
        double settle_ticks;
        double yaw_drift;
        int32_t initialised;
        const double *q, *qd, *tau;
        const double *quat;
        const double *gyro;
        const double *accel;
        const double *planned;
        const double *Q0, *R0;
        double *x;
        double *rot;
        double *feet, *jacobian;
        double *leg_force;
        double *force;
        double *trust;
        double *contact_age;
        double *y, *R, *Q;
    } mk_odometry;
    void mk_odometry_step(mk_odometry *o);
    typedef struct {
        int32_t legs;
        double dt, rx, ry;
        double min_swing_share;
        double foot_radius;
        double sink;
        double cross_coupling;
        int32_t zero_target;
        const double *cmd;
        const double *lo, *hi;
        double *target;
        int32_t timing_stand;
        double length, width;
        double ax_up, ax_down, ay, ayaw;
        double height, pitch;
        int32_t has_offset;
        int32_t hold_down;
        const double *nominal;
        const double *half;
        const double *offset;
        const double *apex;
        const uint8_t *contact;
        const int64_t *run_start, *run_length;
        int64_t segment_ticks, phase;
        const double *feedback;
        double *v;
        double *feet;
        uint8_t *swinging;
        int64_t *swing_tick, *swing_ticks;
        double *lift, *landing;
        double *swing_apex;
        double *out;
    } mk_gait;
    void mk_gait_target(mk_gait *g);
    void mk_gait_step(mk_gait *g);
    double mk_gait_stride_ratio(const mk_gait *g, const double *half, const double *v);
    typedef struct {
        int32_t legs;
        double dt, yaw_slack, position_slack, foot_radius, placement_gain;
        double position_gain;
        double position_reach;
        double level_reach;
        double weight;
        const double *com_offset;
        const double *torque_limit;
        const double *rot;
        const double *x;
        const double *est_feet;
        const double *jacobian;
        const double *v;
        double height;
        const uint8_t *swinging;
        const int64_t *swing_tick, *swing_ticks;
        int32_t started;
        double yaw_des;
        double *p_des;
        double yaw, cos_yaw, sin_yaw;
        double *com, *v_world;
        double *feet;
        uint8_t *down;
        const double *plan_forces;
        double *forces;
        double *tau, *tau_ff;
        double *placement;
    } mk_balance;
    void mk_balance_reference(mk_balance *b);
    int32_t mk_balance_torques(mk_balance *b);
    """
)
ffibuilder.set_source(
    "controller._kernel",
    '#include "kernel.h"',
    sources=[os.path.join(REL, name) for name in
             ("kernel.c", "rtclock.c", "wire.c", "kalman.c", "statics.c", "legs.c", "odometry.c", "gait.c",
              "balance.c", "watch.c", "limits.c", "crc.c")],
    include_dirs=[REL],
    extra_compile_args=["-O2", "-std=c99", "-Wall", "-Wextra"],
    libraries=["m"],
)

if __name__ == "__main__":
    ffibuilder.compile(tmpdir=str(HERE.parent), verbose=False)
