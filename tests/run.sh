#!/bin/sh
# `make test`: tests/run.sh PYTHON JOBS [pytest arguments...], inside the
# network namespace of tests/netns.sh. Two passes at once:
#
# - the udpm tests (daemons, simulators and clients on the real clock, many
#   held to the SPEC's real-time bounds), one at a time, at normal priority;
# - beside them, the tests that open no udpm:// socket (pure computation on
#   injected clocks), spread over JOBS processes test by test (pytest-xdist
#   --dist loadgroup; a module with a module-scoped fixture is one group,
#   kept in one process so the fixture is built once: tests/conftest.py), at
#   the idle scheduling class (SCHED_IDLE, `chrt --idle`): they take only
#   the CPU time the udpm pass leaves, so they never delay a daemon's tick,
#   and the whole machine once the udpm pass is done.
#
# Run one after the other the two passes took 461 s + 396 s on the 2-core
# development machine; the udpm pass leaves about a core idle while it waits
# on the real clock. MOTIOND_TEST_SERIAL=1 runs them one after the other as
# before (to time a pass alone, or on a machine without chrt).
#
# The udpm pass prints as it runs; the other pass's output is kept and
# printed when both are done. The exit status is the first failing pass's
# (the one without sockets first). A pass that selects no test (arguments
# naming one file) is not a failure.
set -u
# One BLAS thread per process: numpy's OpenBLAS otherwise starts a thread per
# core in every test process, and two xdist workers' threads fight over the
# two cores (a scorecard worker measured: no faster with them, 1.7x slower
# beside a second worker).
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
py=$1 jobs=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prio=
computed() {
    # shellcheck disable=SC2086  # $prio is the command prefix, split on purpose
    $prio "$py" -m pytest -q -p xdist -n "$jobs" --dist loadgroup -m "not udpm" --durations=20 \
        --basetemp="$work/computed" "$@"
}
realtime() {
    "$py" -m pytest -q -p no:xdist -m udpm --durations=20 --basetemp="$work/realtime" "$@"
}
if [ "${MOTIOND_TEST_SERIAL:-}" = 1 ] || ! command -v chrt > /dev/null; then
    computed "$@"
    first=$?
    realtime "$@"
    second=$?
else
    echo "tests without sockets: running beside the udpm tests at idle priority (their output follows)"
    prio="chrt --idle 0"
    computed "$@" > "$work/computed.log" 2>&1 &
    beside=$!
    realtime "$@"
    second=$?
    wait $beside
    first=$?
    echo
    echo "tests without sockets (run beside the udpm tests):"
    cat "$work/computed.log"
fi
[ $first = 5 ] && first=0
[ $second = 5 ] && second=0
[ $first != 0 ] && exit $first
exit $second
