"""A numpy reference of the kernel's math (csrc/kernel.c), written from the
formulas rather than from the C, so the two check each other."""
from __future__ import annotations

import math

import numpy as np

LINEAR, CUBIC, QUINTIC = 0, 1, 2


def evaluate(t, t0, dur, q0, q1, v0, v1, profile, g_t0, g_dur, kp0, kp1, kd0, kd1, tau_ff,
             q_min, q_max, v_max, step_max, prev_pos):
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(dur > 0, np.clip(np.nan_to_num((t - t0) / dur, nan=0.0), 0.0, 1.0), 1.0)
        T = np.where(dur > 0, dur, 1.0)
        dq = q1 - q0
        # Linear.
        pos_l = q0 + dq * s
        vel_l = dq / T
        # Hermite cubic with boundary velocities.
        h00, h10 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s
        h01, h11 = -2 * s**3 + 3 * s**2, s**3 - s**2
        pos_c = h00 * q0 + h10 * v0 * T + h01 * q1 + h11 * v1 * T
        vel_c = ((6 * s**2 - 6 * s) * q0 + (3 * s**2 - 4 * s + 1) * v0 * T
                 + (-6 * s**2 + 6 * s) * q1 + (3 * s**2 - 2 * s) * v1 * T) / T
        # Minimum jerk.
        pos_q = q0 + dq * (10 * s**3 - 15 * s**4 + 6 * s**5)
        vel_q = dq / T * (30 * s**2 - 60 * s**3 + 30 * s**4)
    pos = np.select([profile == CUBIC, profile == QUINTIC], [pos_c, pos_q], pos_l)
    vel = np.select([profile == CUBIC, profile == QUINTIC], [vel_c, vel_q], vel_l)
    pos = np.where(dur <= 0, q1, np.where(s >= 1, q1, pos))
    vel = np.where(dur <= 0, v1, np.where(s >= 1, 0.0, vel))
    bad = ~np.isfinite(pos) | ~np.isfinite(vel)
    pos = np.where(bad, np.where(np.isfinite(q0), q0, 0.5 * (q_min + q_max)), pos)
    vel = np.where(bad, 0.0, vel)
    limited = (step_max > 0) & np.isfinite(prev_pos)
    pos = np.where(limited, np.clip(pos, prev_pos - step_max, prev_pos + step_max), pos)
    vel = np.where((pos < q_min) & (vel < 0), 0.0, vel)
    vel = np.where((pos > q_max) & (vel > 0), 0.0, vel)
    pos = np.clip(pos, q_min, q_max)
    vel = np.clip(vel, -v_max, v_max)
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.where(g_dur > 0, np.clip(np.nan_to_num((t - g_t0) / g_dur, nan=0.0), 0.0, 1.0), 1.0)
    kp = kp0 + (kp1 - kp0) * g
    kd = kd0 + (kd1 - kd0) * g
    kp = np.where(np.isfinite(kp) & (kp >= 0), kp, 0.0)
    kd = np.where(np.isfinite(kd) & (kd >= 0), kd, 0.0)
    tau = np.where(np.isfinite(tau_ff), tau_ff, 0.0)
    return pos, vel, kp, kd, tau


def evaluate_python(t, t0, dur, q0, q1, v0, v1, profile, g_t0, g_dur, kp0, kp1, kd0, kd1,
                    tau_ff, q_min, q_max, v_max, step_max, prev_pos):
    """The same math joint by joint in plain Python (lists of floats in and
    out): the third implementation `make bench` times against the C kernel."""
    isfinite = math.isfinite
    pos_out, vel_out, kp_out, kd_out, tau_out = [], [], [], [], []
    for i in range(len(t0)):
        d, a, b = dur[i], q0[i], q1[i]
        if d <= 0:
            pos, vel = b, v1[i]
        else:
            s = (t - t0[i]) / d
            s = 0.0 if not s > 0.0 else min(s, 1.0)
            if s >= 1.0:
                pos, vel = b, 0.0
            elif profile[i] == CUBIC:
                s2, s3 = s * s, s * s * s
                m0, m1 = v0[i] * d, v1[i] * d
                pos = (2 * s3 - 3 * s2 + 1) * a + (s3 - 2 * s2 + s) * m0 \
                    + (-2 * s3 + 3 * s2) * b + (s3 - s2) * m1
                vel = ((6 * s2 - 6 * s) * a + (3 * s2 - 4 * s + 1) * m0
                       + (-6 * s2 + 6 * s) * b + (3 * s2 - 2 * s) * m1) / d
            elif profile[i] == QUINTIC:
                pos = a + (b - a) * (10 * s**3 - 15 * s**4 + 6 * s**5)
                vel = (b - a) / d * (30 * s**2 - 60 * s**3 + 30 * s**4)
            else:
                pos, vel = a + (b - a) * s, (b - a) / d
        if not (isfinite(pos) and isfinite(vel)):
            pos, vel = (a if isfinite(a) else 0.5 * (q_min[i] + q_max[i])), 0.0
        step, prev = step_max[i], prev_pos[i]
        if step > 0 and isfinite(prev):
            pos = min(max(pos, prev - step), prev + step)
        if pos < q_min[i]:
            pos, vel = q_min[i], max(vel, 0.0)
        if pos > q_max[i]:
            pos, vel = q_max[i], min(vel, 0.0)
        vel = min(max(vel, -v_max[i]), v_max[i])
        gd = g_dur[i]
        g = 1.0
        if gd > 0:
            g = (t - g_t0[i]) / gd
            g = 0.0 if not g > 0.0 else min(g, 1.0)
        kp = kp0[i] + (kp1[i] - kp0[i]) * g
        kd = kd0[i] + (kd1[i] - kd0[i]) * g
        pos_out.append(pos)
        vel_out.append(vel)
        kp_out.append(kp if isfinite(kp) and kp >= 0 else 0.0)
        kd_out.append(kd if isfinite(kd) and kd >= 0 else 0.0)
        tau_out.append(tau_ff[i] if isfinite(tau_ff[i]) else 0.0)
    return pos_out, vel_out, kp_out, kd_out, tau_out
