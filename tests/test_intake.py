"""The life_count rule and the receive timer (SPEC §2.1, §2.3)."""
from harness import command

from controller.protocol.intake import Intake

TIMEOUT_NS = 500_000_000


def fresh_intake():
    return Intake(TIMEOUT_NS, tick_ms=2.0)


def test_first_message_with_life_count_minus_one_is_a_heartbeat():
    intake = fresh_intake()
    assert intake.receive(command(12, life_count=-1), 0).heartbeat
    assert intake.receive(command(12, life_count=0), 1).block is not None


def test_repeated_life_count_only_refreshes_the_timer():
    intake = fresh_intake()
    assert intake.receive(command(12, life_count=5), 0).block is not None
    again = intake.receive(command(21, life_count=5), 400_000_000)
    assert again.heartbeat and again.block is None
    assert intake.last_life_count == 5
    # Ticks are 2 ms apart: 249 ticks later fresh, 250 ticks later timed out,
    # with half a tick of slack for wake-up jitter either way.
    assert intake.fresh(400_000_000 + 498_000_000 + 900_000)
    assert not intake.fresh(400_000_000 + 500_000_000 - 900_000)


def test_mode_minus_one_is_a_heartbeat_and_keeps_the_stored_value():
    intake = fresh_intake()
    intake.receive(command(12, life_count=3), 0)
    assert intake.receive(command(-1, life_count=9), 1).heartbeat
    assert intake.last_life_count == 3
    assert intake.receive(command(12, life_count=9), 2).block is not None


def test_only_equality_matters_including_wrap_and_negative_values():
    intake = fresh_intake()
    accepted = [intake.receive(command(12, life_count=lc), i).block is not None
                for i, lc in enumerate([127, -128, -127, 50, 10, 10, -1, -1])]
    assert accepted == [True, True, True, True, True, False, True, False]


def test_duration_is_halved_toward_zero():
    intake = fresh_intake()
    ticks = []
    for lc, ms in enumerate([0, 1, 2, 3, 1001, -1, -3]):
        ticks.append(intake.receive(command(21, life_count=lc, duration=ms), lc).block.duration)
    assert ticks == [0, 0, 1, 1, 500, 0, -1]


def test_non_finite_field_rejects_the_command_and_consumes_the_life_count():
    intake = fresh_intake()
    result = intake.receive(command(21, life_count=4, rpy_des=[0, float("nan"), 0]), 0)
    assert result.block is None and "rpy_des" in result.error
    assert intake.receive(command(21, life_count=4), 1).heartbeat


def test_never_received_is_not_fresh():
    assert not fresh_intake().fresh(0)


def test_the_one_unpack_reads_a_command_as_the_generated_decoder_does():
    """COMMAND_WIRE (the controller's fast path) against lcm-gen's decoder,
    on commands with every field set to a different value, and the block
    made from either is the same."""
    import random

    from controller import msgs
    from controller.protocol.block import COMMAND_WIRE, block_from_message, block_from_values, command_values

    rng = random.Random(7)
    for _ in range(200):
        m = msgs.robot_control_cmd_lcmt()
        m.mode, m.gait_id, m.contact, m.life_count = (rng.randint(-128, 127) for _ in range(4))
        for name, n in (("vel_des", 3), ("rpy_des", 3), ("pos_des", 3), ("acc_des", 6),
                        ("ctrl_point", 3), ("foot_pose", 6), ("step_height", 2)):
            setattr(m, name, [rng.uniform(-10, 10) for _ in range(n)])
        m.value, m.duration = rng.randint(-2**31, 2**31 - 1), rng.randint(-10**6, 10**6)
        data = m.encode()
        values = COMMAND_WIRE.unpack(data)
        assert values[0] == data[:8]
        decoded = msgs.robot_control_cmd_lcmt.decode(data)
        assert values[1:] == command_values(decoded)
        a, b = block_from_values(values[1:], 2.0), block_from_message(decoded, 2.0)
        assert a == b and a.vel_des == tuple(decoded.vel_des) and a.duration == int(m.duration / 2.0)
        assert (a.mode, a.life_count, a.value) == (m.mode, m.life_count, m.value)


def test_a_non_finite_field_is_named_whichever_it_is():
    intake = fresh_intake()
    for k, (name, value) in enumerate((("vel_des", float("inf")), ("acc_des", float("nan")),
                                       ("step_height", float("-inf")))):
        msg = command(21, life_count=k)
        setattr(msg, name, [0.0, value] + [0.0] * (len(getattr(msg, name)) - 2))
        result = intake.receive(msg, k)
        assert result.block is None and result.error is not None and name in result.error
