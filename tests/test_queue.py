"""The command-block queue (SPEC §3)."""
from controller.protocol.block import Block
from controller.protocol.queue import CommandQueue

DONE, TRANSITIONING = 0, 1


def run(queue, ticks, status=DONE):
    """Process `ticks` ticks; return the active block's (mode, gait) per tick."""
    return [(b.mode, b.gait_id) for b in (queue.process(status) for _ in range(ticks))]


def test_timed_blocks_run_in_order_for_exactly_their_duration():
    q = CommandQueue()
    q.enqueue(Block(21, 0, duration=3))
    q.enqueue(Block(21, 1, duration=2))
    q.enqueue(Block(21, 5, duration=4))
    seen = run(q, 10)
    assert seen == [(21, 0)] * 3 + [(21, 1)] * 2 + [(21, 5)] * 4 + [(21, 3)]


def test_continuous_command_preempts_and_clears_the_queue():
    q = CommandQueue()
    q.enqueue(Block(21, 0, duration=100))
    q.enqueue(Block(21, 1, duration=100))
    run(q, 5)
    q.enqueue(Block(7, 1, duration=0))
    assert len(q) == 1 and q.timer == 0
    assert run(q, 300) == [(7, 1)] * 300  # continuous: never expires


def test_timed_block_waits_behind_timed_blocks_but_pops_leading_continuous_ones():
    q = CommandQueue()
    q.enqueue(Block(12, 0, duration=0))
    run(q, 7)
    q.enqueue(Block(21, 0, duration=2))
    assert [b.mode for b in q.blocks] == [21] and q.timer == 0
    assert run(q, 3) == [(21, 0), (21, 0), (21, 3)]


def test_fillers_follow_the_expired_block_kind():
    cases = {
        (3, 0): (3, 1), (11, 27): (11, 1), (11, 31): (11, 31), (11, 110): (11, 31),
        (12, 0): (21, 3), (21, 5): (21, 3), (0, 0): (0, 0), (7, 1): (7, 1),
    }
    for (mode, gait), expected in cases.items():
        q = CommandQueue()
        q.enqueue(Block(mode, gait, duration=1))
        run(q, 1)
        filler = q.process(DONE)
        assert (filler.mode, filler.gait_id) == expected, (mode, gait)
        assert filler.duration == 200 and filler.contact == 0x0F


def test_filler_lasts_400_ms_and_is_replaced_by_the_same_kind():
    q = CommandQueue()
    q.enqueue(Block(21, 0, duration=1))
    run(q, 1)
    first = q.process(DONE)
    run(q, 199)
    second = q.process(DONE)
    assert second.uid != first.uid and (second.mode, second.gait_id) == (21, 3)


def test_block_timer_is_frozen_while_transitioning():
    q = CommandQueue()
    q.enqueue(Block(21, 0, duration=3))
    run(q, 50, status=TRANSITIONING)
    assert q.timer == 0
    assert run(q, 4) == [(21, 0)] * 3 + [(21, 3)]


def test_lie_to_side_injects_a_four_tick_stand():
    q = CommandQueue()
    q.enqueue(Block(12, 17, duration=0))
    assert [(b.mode, b.gait_id, b.duration) for b in q.blocks] == [(12, 0, 4), (12, 17, 0)]
    assert run(q, 6) == [(12, 0)] * 4 + [(12, 17)] * 2


def test_mode_62_is_dropped_while_a_motion_runs():
    q = CommandQueue(expand_motion=lambda b: [Block(21, 1, duration=5), Block(21, 1, duration=5)])
    q.enqueue(Block(62, 3, duration=100))
    run(q, 1)
    assert q.motion_trigger == 3 and q.motion_id == 3 and q.total == 2
    assert q.enqueue(Block(62, 4, duration=100)) is not None
    assert q.dropped == 1


def test_motion_progress_formula():
    steps = [Block(21, 1, duration=10) for _ in range(4)]
    q = CommandQueue(expand_motion=lambda b: list(steps))
    q.enqueue(Block(62, 1, duration=1))
    bars = []
    for _ in range(40):
        q.process(DONE)
        bars.append(q.motion_progress())
    # trunc((total - remaining) * 100 / total) + 1: 1, 26, 51, 76; forced to 100
    # once the last block is past 90 % of its duration.
    assert bars[0] == 1 and bars[10] == 26 and bars[20] == 51 and bars[30] == 76
    assert bars[38] == 76 and bars[39] == 100


def test_override_replaces_the_queue_with_one_continuous_block():
    q = CommandQueue()
    q.enqueue(Block(21, 0, duration=100))
    q.enqueue(Block(21, 1, duration=100))
    q.override = 7
    active = q.process(DONE)
    assert (active.mode, active.gait_id, active.duration) == (7, 0, 0) and len(q) == 1
    assert q.override is None


def test_only_a_command_block_expiring_into_an_empty_queue_clears_the_motion_trigger():
    for source, expected in (("timeout", 5), ("command", 0)):
        q = CommandQueue()
        q.motion_trigger = 5
        q.replace_all(Block(21, 1, duration=1, source=source))
        run(q, 2)   # expires on the second tick; a timed filler follows
        assert q.motion_trigger == expected, source
