/*
 * motiond interpolation kernel: one call per tick evaluates every joint's
 * active segment and writes the joint command into caller-owned buffers.
 *
 * All arrays hold n elements and are owned by the caller (numpy buffers in
 * controller/robot/native.py); the kernel never allocates.
 */
#ifndef MOTIOND_KERNEL_H
#define MOTIOND_KERNEL_H

#include <stdint.h>

/* x within [lo, hi] (a NaN stays NaN); shared by the C files. */
static inline double mk_clamp(double x, double lo, double hi)
{
    return x < lo ? lo : (x > hi ? hi : x);
}

/* Segment profiles. A segment with dur <= 0 is a set point: position q1 with
 * velocity v1. After its end a segment holds q1 with zero velocity. */
#define MK_LINEAR  0  /* constant velocity from q0 to q1 */
#define MK_CUBIC   1  /* Hermite cubic: q0 with velocity v0 to q1 with velocity v1 */
#define MK_QUINTIC 2  /* minimum jerk: zero velocity and acceleration at both ends */

typedef struct {
    int32_t n;
    /* per-joint segment: position profile over [t0, t0 + dur] (seconds) */
    const double *t0;
    const double *dur;
    const double *q0;
    const double *q1;
    const double *v0;
    const double *v1;
    const int32_t *profile;
    /* per-joint gain ramp: linear from (kp0, kd0) to (kp1, kd1) over [g_t0, g_t0 + g_dur] */
    const double *g_t0;
    const double *g_dur;
    const double *kp0;
    const double *kp1;
    const double *kd0;
    const double *kd1;
    const double *tau_ff;
    /* per-joint limits */
    const double *q_min;
    const double *q_max;
    const double *v_max;
    const double *step_max;  /* largest change of pos per call; <= 0: no limit */
    /* outputs (pos is also the previous tick's position for the step limit) */
    double *pos;
    double *vel;
    double *kp;
    double *kd;
    double *tau;
} mk_plan;

/*
 * Evaluate every joint at time t (seconds). Returns the number of joints whose
 * position or velocity was clamped to its limits or its step limit, or whose
 * segment produced a non-finite value (which is replaced by the segment
 * start, a finite value). No output jumps by more than step_max per call,
 * whatever the segments say.
 */
int32_t mk_step(const mk_plan *plan, double t);

/* Every joint's segment a set point at q with velocity (q - q_prev) / dt
 * (kernel.c; a behaviour's per-tick target). Writes the plan's segment
 * arrays, which the caller owns writable. */
void mk_stream(const mk_plan *plan, const double *q, const double *q_prev, double dt);

/* CLOCK_MONOTONIC now, in ns. */
int64_t mk_now_ns(void);

/* Unitree SDK2's message CRC over n native 32-bit words (crc.c). */
uint32_t mk_crc32_words(const uint32_t *words, int32_t n);
/* A Unitree LowCmd_ as CDR, with its CRC (crc.c). */
uint32_t mk_unitree_lowcmd(const double *q, const double *dq, const double *tau, const double *kp,
                           const double *kd, int32_t n, uint8_t *out);

/* Sleep until the CLOCK_MONOTONIC time deadline_ns (absolute); 0 on success. */
int mk_sleep_until(int64_t deadline_ns);

/* Real-time setup of the calling thread / process (rtclock.c); each returns 0
 * or the errno value of the failed system call. */
int mk_set_timer_slack(int64_t slack_ns);   /* prctl(PR_SET_TIMERSLACK) */
int64_t mk_get_timer_slack(void);
int mk_lock_memory(void);                   /* mlockall(MCL_CURRENT | MCL_FUTURE) */
int mk_unlock_memory(void);
/* Keep every CPU out of idle states that take longer than max_us to wake from
 * (PM QoS, /dev/cpu_dma_latency) for as long as the returned file descriptor
 * is open; -errno when refused. */
int mk_request_cpu_latency(int32_t max_us);

/* The LCM encoding of msgs.joint_command_t (lcmtypes/joint_command_t.lcm)
 * from the plan's outputs (wire.c): the 8-byte type fingerprint, then utime,
 * tick, num_joints = n and the position, velocity, kp, kd, torque arrays as
 * big-endian float32, through the joint map (NULL: the identity): slot k
 * carries direction[k] * pos[order[k]] + offset[k], direction[k] * vel and
 * tau, and kp, kd as they are. Writes mk_joint_command_size(n) bytes into
 * buf and returns that size, or -1 when capacity is too small or the map's
 * n is not the plan's. Any change to the .lcm
 * type must change this function too (a test compares it with lcm-gen's). */
typedef struct {
    int32_t n;
    const int32_t *order;       /* wire slot k carries the plan's joint order[k] */
    const double *direction;    /* per wire slot, +1 or -1 */
    const double *offset;       /* per wire slot, rad */
} mk_joint_map;
int32_t mk_joint_command_size(int32_t n);
int32_t mk_encode_joint_command(const mk_plan *plan, const mk_joint_map *map, uint64_t fingerprint,
                                int64_t utime, int64_t tick, uint8_t *buf, int32_t capacity);

/* A linear Kalman filter's covariance arithmetic (kalman.c), row-major:
 * predict P = A P A^T + diag(q) (tmp: n x n); update x and P with the
 * measurement y = H x + noise of variances r (work: 2 m n + m m + m),
 * returning -1, with nothing changed, if H P H^T + diag(r) is not positive
 * definite. Zeros of A and H are skipped. */
void mk_kalman_predict(int32_t n, const double *A, double *P, const double *q, double *tmp);
int32_t mk_kalman_update(int32_t n, int32_t m, double *x, double *P, const double *H,
                         const double *r, const double *y, double *work);

/* Leg statics (statics.c): per leg, the force f with J^T f = tau, J the
 * leg's 3 x 3 Jacobian (row-major, legs of them in a row); a singular leg
 * gets the damped least-squares f. Returns how many legs were singular. */
int32_t mk_leg_forces(int32_t legs, const double *J, const double *tau, double *f);

/* The tracking-error watch (watch.c): per joint, err = |q - target| and its
 * run of ticks beyond `bound` while kp >= min_kp (0 otherwise), in `over`.
 * Returns the farthest joint whose run reached `ticks`, or -1. */
int32_t mk_tracking_check(int32_t n, const double *q, const double *target, const double *kp,
                          double bound, double min_kp, int64_t ticks, int64_t *over, double *err);

/* The sensor watch's joint checks (watch.c; controller/core/sensor_watch.py):
 * an encoder's jump, a frozen encoder, a weak motor. Its limits, its state
 * and its buffers (n each; before 5 x n; the lines torque_ticks x n; knee and
 * no_load NULL when the motors' envelope is not known). */
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

/* The foot workspace check (watch.c): footpos_error's bits, per leg l bit 3l
 * for |x| > x_limit and bit 3l + 2 for z > z_limit or x^2 + z^2 > far, x and z
 * the foot's offset from its hip (body frame, legs x 3 row-major each). */
int32_t mk_foot_workspace_bits(int32_t legs, const double *feet, const double *hip,
                               double x_limit, double z_limit, double far);

/* Joint targets inside the limits (limits.c): a non-finite q[i] becomes
 * fallback[i], then it is clamped to [q_min[i] + margin, q_max[i] - margin]. */
void mk_inside_limits(int32_t n, const double *q, const double *fallback, const double *q_min,
                      const double *q_max, double margin, double *out);

/* Leg kinematics of the 3-DoF quadruped leg (legs.c; the conventions are
 * controller/robot/kinematics.py's): link lengths, and per leg its side
 * sign (+1 left, -1 right) and hip offset (x, y, z) in the body frame. */
typedef struct {
    int32_t legs;
    double l1, l2, l3;           /* abad, hip and knee links, m */
    double foot_radius;          /* m: the loaded foot's centre over the ground (radius less sink) */
    double roll_radius;          /* m: the radius the foot rolls on (its own, unloaded) */
    const double *side;          /* legs */
    const double *hip;           /* legs x 3 */
} mk_legs;

/* Feet (legs x 3, body frame) for joints q (legs x 3) and, unless J is
 * NULL, each leg's Jacobian d foot / d q (legs x 3 x 3). */
void mk_leg_forward(const mk_legs *g, const double *q, double *p, double *J);
/* Joints q (legs x 3) putting each foot at body-frame p (legs x 3); a
 * target out of reach is pulled onto the reachable shell along its
 * direction and flagged in clipped (legs). Returns how many were. */
int32_t mk_leg_inverse(const mk_legs *g, const double *p, double *q, uint8_t *clipped);

/* The locomotion's tick from feet to kernel (legs.c): mk_leg_inverse into q,
 * mk_inside_limits in place (fallback for a non-finite angle), mk_stream
 * from q_prev over dt. plan->n is 3 x legs. Returns mk_leg_inverse's count. */
int32_t mk_leg_targets(const mk_legs *g, const double *feet, const double *fallback,
                       const double *q_min, const double *q_max, double margin,
                       const mk_plan *plan, const double *q_prev, double dt, double *q,
                       uint8_t *clipped);

/* One tick of the quadruped state estimate's arithmetic (odometry.c):
 * inputs this tick's joints, torques and IMU sample; outputs the rotation,
 * feet, Jacobians and loads, the filter state x predicted with the IMU's
 * acceleration, and the measurement y, its noise R and the process noise Q
 * for kalman.c. The state x is 6 + 3 legs long: position, velocity, feet. */
typedef struct {
    const mk_legs *geometry;
    double dt, gravity;          /* s; m/s^2, positive */
    double contact_force, contact_band, suspect;
    double settle_ticks;         /* a loaded foot's trust ramps up over this many ticks (0: at once) */
    double yaw_drift;            /* rad, taken off the IMU's yaw */
    int32_t initialised;         /* 0: the step sets x from the feet, then 1 */
    const double *q, *qd, *tau;  /* legs x 3 */
    const double *quat;          /* 4: w x y z, body to world */
    const double *gyro;          /* 3: body rate, bias taken off */
    const double *accel;         /* 3: specific force, body frame */
    const double *planned;       /* legs: 1 planned on the ground, 0 not */
    const double *Q0, *R0;       /* 6 + 3 legs; 7 legs */
    double *x;                   /* 6 + 3 legs */
    double *rot;                 /* 3 x 3 */
    double *feet, *jacobian;     /* legs x 3; legs x 3 x 3 */
    double *leg_force;           /* legs x 3: the force each leg pushes with, body frame */
    double *force;               /* legs x 3: the ground's force on each foot, world frame */
    double *trust;               /* legs */
    double *contact_age;         /* legs: ticks each foot has carried load in a row */
    double *y, *R, *Q;           /* 7 legs; 7 legs; 6 + 3 legs */
} mk_odometry;

void mk_odometry_step(mk_odometry *o);

/* One tick of the open-loop gait generator (gait.c; the gait is
 * controller/motion/gait.py's). mk_gait_target: the commanded velocity
 * inside the window [lo, hi] with the cross-coupling (zero_target: zero).
 * mk_gait_step: that target scaled down to what the stance feet can reach,
 * the velocity v rate-limited toward it, then every leg one tick: the
 * generator's state arrays updated in place, the feet in the pitched body
 * frame into out. mk_gait_stride_ratio: how far the feet would travel in
 * half a stance (per leg, half) at velocity v, as a share of the half-stride
 * ellipse. */
typedef struct {
    int32_t legs;
    double dt, rx, ry;           /* tick, s; the half-stride ellipse, m */
    double min_swing_share;      /* a late swing keeps at least this share of its run */
    double foot_radius;          /* m */
    double sink;                 /* m: how far a loaded foot sinks into the floor */
    double cross_coupling;       /* at full |vx| the vy and yaw windows shrink by this share */
    /* this tick's command and window */
    int32_t zero_target;
    const double *cmd;           /* 3: commanded vx, vy, yaw rate */
    const double *lo, *hi;       /* 3 each: the window */
    double *target;              /* 3: out of mk_gait_target */
    /* the timing in force and the gait's acceleration limits */
    int32_t timing_stand;
    double length, width;        /* the timing's stance scale */
    double ax_up, ax_down, ay, ayaw;
    double height, pitch;        /* body height, m; pitch, rad */
    int32_t has_offset;          /* a user gait's landing offsets apply */
    int32_t hold_down;           /* no new lift-offs (a motion gait stopping) */
    const double *nominal;       /* legs x 2 */
    const double *half;          /* legs: half a stance, s */
    const double *offset;        /* legs x 2 */
    const double *apex;          /* legs: the step height for swings starting now */
    /* the timing's timetable (segments x legs, row-major): stance?, and per
     * stance/swing run the segments since it started and its length */
    const uint8_t *contact;
    const int64_t *run_start, *run_length;
    int64_t segment_ticks, phase;        /* ticks a segment; ticks into the cycle */
    const double *feedback;      /* 3: the closed loop's landing offset (x, y, level frame) and
                                  * how far the body is above its height (swing feet answer it) */
    double *v;                   /* 3: the body's velocity, level frame */
    double *feet;                /* legs x 2, level frame */
    uint8_t *swinging;           /* legs */
    int64_t *swing_tick, *swing_ticks;   /* legs */
    double *lift, *landing;      /* legs x 2 */
    double *swing_apex;          /* legs */
    double *out;                 /* legs x 3, body frame */
} mk_gait;

void mk_gait_target(mk_gait *g);
void mk_gait_step(mk_gait *g);
double mk_gait_stride_ratio(const mk_gait *g, const double *half, const double *v);

/* One tick of the closed-loop trot (balance.c; controller/motion/balance.py
 * says what it does). mk_balance_reference moves the reference on and fills
 * yaw, com, v_world, feet and down for the MPC's request; then, with
 * plan_forces the plan's forces for this tick (legs x 3, world frame) or NULL
 * (no plan: the feet down share the weight), mk_balance_torques writes the
 * forces, the torques tau = -J^T R^T f, tau_ff (tau within the torque limit)
 * and the landing feedback; it returns 1 when it had no plan. */
typedef struct {
    int32_t legs;
    double dt, yaw_slack, position_slack, foot_radius, placement_gain;
    double position_gain;        /* landing moves by this x (com - p_des), level heading frame */
    double position_reach;       /* m: that move's largest size */
    double level_reach;          /* m: swing feet answer the body's height error up to this; 0: off */
    double weight;               /* N: the body's weight, the fallback's to share */
    const double *com_offset;    /* 3, body frame */
    const double *torque_limit;  /* 3 legs, N m */
    /* the state estimate */
    const double *rot;           /* 3 x 3, body to world */
    const double *x;             /* position (3) then velocity (3), world frame */
    const double *est_feet;      /* legs x 3, body frame */
    const double *jacobian;      /* legs x 3 x 3 */
    /* the gait generator */
    const double *v;             /* 3: its limited vx, vy, yaw rate */
    double height;               /* its body height, m */
    const uint8_t *swinging;
    const int64_t *swing_tick, *swing_ticks;
    /* kept between ticks (started = 0: the next tick starts the reference at the estimate) */
    int32_t started;
    double yaw_des;
    double *p_des;               /* 3 */
    /* outputs */
    double yaw, cos_yaw, sin_yaw;
    double *com, *v_world;       /* 3 each, world frame */
    double *feet;                /* legs x 3: the estimate's feet, the foot radius off z */
    uint8_t *down;               /* legs */
    const double *plan_forces;   /* input of mk_balance_torques */
    double *forces;              /* legs x 3, world frame */
    double *tau, *tau_ff;        /* 3 legs */
    double *placement;           /* 3: landing x, y; the body's height error for the swing feet */
} mk_balance;

void mk_balance_reference(mk_balance *b);
int32_t mk_balance_torques(mk_balance *b);

#endif
