"""The C kernel against the numpy reference, and the properties each profile promises."""
import numpy as np
import pytest
from kernel_reference import evaluate, evaluate_python

from controller.robot.native import CUBIC, LINEAR, QUINTIC, Kernel

FIELDS = ("t0", "dur", "q0", "q1", "v0", "v1", "profile", "g_t0", "g_dur", "kp0", "kp1",
          "kd0", "kd1", "tau_ff", "q_min", "q_max", "v_max", "step_max")


def random_kernel(rng, n):
    k = Kernel(rng.uniform(-3, -1, n), rng.uniform(1, 3, n), rng.uniform(2, 40, n))
    k.t0[:] = rng.uniform(0, 1, n)
    k.dur[:] = np.where(rng.random(n) < 0.1, 0.0, rng.uniform(0.002, 2, n))
    k.q0[:] = rng.uniform(-3.5, 3.5, n)
    k.q1[:] = rng.uniform(-3.5, 3.5, n)
    k.v0[:] = rng.uniform(-5, 5, n)
    k.v1[:] = rng.uniform(-5, 5, n)
    k.profile[:] = rng.integers(0, 3, n)
    k.g_t0[:] = rng.uniform(0, 1, n)
    k.g_dur[:] = np.where(rng.random(n) < 0.3, 0.0, rng.uniform(0.01, 1, n))
    k.kp0[:], k.kp1[:] = rng.uniform(0, 100, n), rng.uniform(0, 100, n)
    k.kd0[:], k.kd1[:] = rng.uniform(0, 5, n), rng.uniform(0, 5, n)
    k.tau_ff[:] = rng.uniform(-12, 12, n)
    k.step_max[:] = np.where(rng.random(n) < 0.5, 0.0, rng.uniform(0.01, 0.5, n))
    return k


@pytest.mark.parametrize("seed", range(5))
def test_kernel_matches_numpy_reference(seed):
    rng = np.random.default_rng(seed)
    k = random_kernel(rng, 64)
    for t in np.linspace(-0.2, 3.2, 60):
        previous = k.pos.copy()
        k.step(t)
        ref = evaluate(t, **{f: getattr(k, f) for f in FIELDS}, prev_pos=previous)
        for name, expected in zip(("pos", "vel", "kp", "kd", "tau"), ref):
            np.testing.assert_allclose(getattr(k, name), expected, atol=1e-6, rtol=0,
                                       err_msg=f"{name} at t={t}")


@pytest.mark.parametrize("seed", range(3))
def test_the_pure_python_version_matches_the_numpy_reference(seed):
    """make bench times all three; they must compute the same thing."""
    rng = np.random.default_rng(100 + seed)
    k = random_kernel(rng, 64)
    previous = rng.uniform(-3, 3, 64)
    previous[::7] = np.nan
    for t in np.linspace(-0.2, 3.2, 40):
        inputs = {f: getattr(k, f) for f in FIELDS}
        ref = evaluate(t, **inputs, prev_pos=previous)
        plain = evaluate_python(t, **{f: a.tolist() for f, a in inputs.items()}, prev_pos=previous.tolist())
        for name, expected, got in zip(("pos", "vel", "kp", "kd", "tau"), ref, plain):
            np.testing.assert_allclose(got, expected, atol=1e-9, rtol=0, err_msg=f"{name} at t={t}")
        previous = np.asarray(plain[0])


def test_profiles_reach_their_end_points_with_the_promised_velocities():
    k = Kernel(np.full(3, -10.0), np.full(3, 10.0), np.full(3, 100.0))
    k.move(np.zeros(3), np.array([1.0, 1.0, 1.0]), 0.0, 2.0)
    k.profile[:] = [LINEAR, CUBIC, QUINTIC]
    k.v0[1], k.v1[1] = 0.0, 0.0
    k.step(0.0)
    np.testing.assert_allclose(k.pos, 0.0)
    assert k.vel[0] == pytest.approx(0.5) and k.vel[2] == pytest.approx(0.0)
    k.step(1.0)
    np.testing.assert_allclose(k.pos, 0.5)  # every profile is symmetric about the middle
    assert k.vel[2] == pytest.approx(1.0 / 2.0 * 30 / 16)  # min-jerk peak: 1.875 x mean
    k.step(2.0)
    np.testing.assert_allclose(k.pos, 1.0)
    np.testing.assert_allclose(k.vel, 0.0)


def test_quintic_acceleration_is_zero_at_both_ends():
    k = Kernel(np.full(1, -10.0), np.full(1, 10.0), np.full(1, 100.0))
    k.move(0.0, 1.0, 0.0, 1.0, QUINTIC)
    h = 1e-4
    for t in (h, 1.0 - h):
        k.step(t - h)
        v_a = k.vel[0]
        k.step(t + h)
        v_b = k.vel[0]
        assert abs((v_b - v_a) / (2 * h)) < 0.01


def test_cubic_leaves_and_arrives_with_the_given_velocities():
    k = Kernel(np.full(1, -10.0), np.full(1, 10.0), np.full(1, 100.0))
    k.move(0.0, 1.0, 0.0, 1.0, CUBIC, v_start=2.0, v_end=-1.0)
    k.step(0.0)
    assert k.vel[0] == pytest.approx(2.0)
    k.step(1.0 - 1e-9)
    assert k.vel[0] == pytest.approx(-1.0, abs=1e-6)


def test_limits_clamp_position_and_velocity():
    k = Kernel(np.array([-1.0]), np.array([1.0]), np.array([0.5]))
    k.move(0.0, 3.0, 0.0, 1.0)     # 3 rad/s toward a target outside the range
    k.step(0.2)
    assert k.vel[0] == 0.5 and k.flagged == 1
    k.step(0.9)
    assert k.pos[0] == 1.0 and k.vel[0] == 0.0


def test_non_finite_segment_gives_a_finite_output():
    k = Kernel(np.array([-1.0]), np.array([1.0]), np.array([10.0]))
    k.move(0.2, float("nan"), 0.0, 1.0)
    k.step(0.5)
    assert k.pos[0] == 0.2 and k.vel[0] == 0.0 and k.flagged == 1
    k.set_gains(float("inf"), float("nan"))
    k.step(0.5)
    assert k.kp[0] == 0.0 and k.kd[0] == 0.0


def test_gain_ramp_starts_from_the_gains_in_force():
    k = Kernel(np.full(2, -1.0), np.full(2, 1.0), np.full(2, 10.0))
    k.set_gains(np.array([10.0, 20.0]), np.array([1.0, 2.0]))
    k.step(0.0)
    k.set_gains(np.zeros(2), np.zeros(2), t0=1.0, ramp=0.5)
    k.step(1.25)
    np.testing.assert_allclose(k.kp, [5.0, 10.0])
    np.testing.assert_allclose(k.kd, [0.5, 1.0])
    k.step(2.0)
    np.testing.assert_allclose(k.kp, 0.0)


def test_no_output_moves_more_than_the_step_limit_per_tick():
    rng = np.random.default_rng(7)
    n = 12
    k = Kernel(np.full(n, -2.0), np.full(n, 2.0), np.full(n, 30.0), step_max=0.06)
    prev = k.pos.copy()
    for tick in range(400):
        t = tick * 0.002
        if tick % 37 == 0:   # adversarial: targets stepped anywhere, any duration
            k.move(rng.uniform(-5, 5, n), rng.uniform(-5, 5, n), t, rng.choice([0.0, 0.002, 0.5]),
                   int(rng.integers(0, 3)))
        k.step(t)
        assert np.abs(k.pos - prev).max() <= 0.06 + 1e-12
        assert (k.pos >= -2.0).all() and (k.pos <= 2.0).all()
        prev = k.pos.copy()


def test_track_resets_the_step_limit_reference():
    k = Kernel(np.full(2, -3.0), np.full(2, 3.0), np.full(2, 30.0), step_max=0.06)
    k.track(np.array([1.0, -2.0]))
    k.step(0.0)
    np.testing.assert_allclose(k.pos, [1.0, -2.0])


def test_stream_makes_every_segment_a_set_point_as_move_would() -> None:
    """Kernel.stream (one C call, mk_stream) writes what move(q, q, 0, 0,
    LINEAR, v_end=(q - q_prev) / dt) wrote, to the bit, over any segments."""
    rng = np.random.default_rng(3)
    for trial in range(50):
        a, b = random_kernel(rng, 20), random_kernel(rng, 20)
        for f in FIELDS:
            getattr(b, f)[:] = getattr(a, f)
        a.tracking = b.tracking = True
        q, q_prev = rng.uniform(-3, 3, 20), rng.uniform(-3, 3, 20)
        dt = float(rng.choice([0.002, 1 / 3.0, 1e-3]))
        a.stream(q, q_prev, dt)
        b.move(q, q, 0.0, 0.0, LINEAR, v_end=(q - q_prev) / dt)
        for f in FIELDS:
            assert getattr(a, f).tobytes() == getattr(b, f).tobytes(), (trial, f)
        assert a.tracking is False
    k = random_kernel(rng, 20)
    with pytest.raises(ValueError, match="20 float64 joint values"):
        k.stream(np.zeros(19), np.zeros(19), 0.002)
    with pytest.raises(ValueError, match="20 float64 joint values"):
        k.stream(np.zeros(20, dtype=np.float32), np.zeros(20), 0.002)
