#!/bin/sh
# `make test`: tests/run.sh PYTHON JOBS [pytest arguments...], inside the
# network namespace of tests/netns.sh. Three passes:
# 1. the tests that open no udpm:// socket, spread over JOBS processes test
#    by test (pytest-xdist, --dist loadgroup; a module with a module-scoped
#    fixture is one group, kept in one process so the fixture is built once:
#    tests/conftest.py);
# 2. the udpm tests held to no real-clock bound, over JOBS processes, each in
#    a network namespace of its own (tests/conftest.py), so two daemons on
#    the config's multicast groups never hear each other, and none of their
#    daemons at SCHED_FIFO (MOTIOND_TEST_NO_FIFO: two FIFO daemons starved
#    the tests' clients past the 500 ms heartbeat);
# 3. the `realtime` udpm tests (a daemon, a board or a maker's simulator held
#    to the SPEC's real-clock bounds) one at a time, on a machine the rest of
#    the suite does not load. (Running them beside the first pass, at the idle
#    scheduling class, was tried: the emulated CyberDog 2 board, a SCHED_FIFO
#    process, then went 50 ms without sending spi_data in the bridge tests.)
# Every pass runs; the exit status is the first failing pass's. A pass that
# selects no test (arguments naming one file) is not a failure.
set -u
# One BLAS thread per process: numpy's OpenBLAS otherwise starts a thread per
# core in every test process, and two xdist workers' threads fight over the
# two cores (a scorecard worker measured: no faster with them, 1.7x slower
# beside a second worker).
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
py=$1 jobs=$2
shift 2
# The project's modules compiled once, up front: where PYTHONDONTWRITEBYTECODE
# is set (this machine sets it) every Python process the suite starts (the
# xdist workers, each daemon and motionctl a test runs: several hundred)
# would otherwise compile them from source again, 0.5 s of CPU a daemon start.
# Only a saving: a tree it cannot write to is tested all the same.
"$py" -m compileall -q -j 0 controller tests > /dev/null || echo "tests/run.sh: could not compile every module (above); testing all the same"
# The same holds for pytest's rewrite of each test module's asserts (7 s of
# CPU for the whole suite, in every pytest process: two workers and the
# main process per pass). pytest keeps the rewritten modules in __pycache__
# as compileall does, unless PYTHONDONTWRITEBYTECODE is set: it is unset
# for the suite, which writes nothing else (the project's modules are
# compiled above, the dependencies at install).
unset PYTHONDONTWRITEBYTECODE
# What the passes share, gone when the suite ends: the built and installed
# wheel (tests/test_packaging.py builds it once for both of its passes), and
# the list of the modules that hold udpm tests, written by the first pass's
# collection (tests/conftest.py), so the udpm passes import only those.
MOTIOND_TEST_SHARED=$(mktemp -d)
export MOTIOND_TEST_SHARED
trap 'rm -rf "$MOTIOND_TEST_SHARED"' EXIT
"$py" -m pytest -q -p xdist -n "$jobs" --dist loadgroup -m "not udpm" --durations=20 "$@"
first=$?
# Without arguments, the udpm passes collect the modules the first pass
# listed (all of them if it listed none); arguments are passed as given.
udpm_modules=
if [ $# = 0 ] && [ -s "$MOTIOND_TEST_SHARED/udpm_modules" ]; then
    udpm_modules=$(cat "$MOTIOND_TEST_SHARED/udpm_modules")
fi
# shellcheck disable=SC2086 # one module path per word
MOTIOND_TEST_NO_FIFO=1 "$py" -m pytest -q -p xdist -n "$jobs" --dist loadgroup -m "udpm and not realtime" \
    --durations=20 "$@" $udpm_modules
second=$?
# shellcheck disable=SC2086
"$py" -m pytest -q -p no:xdist -m "udpm and realtime" --durations=20 "$@" $udpm_modules
third=$?
# A udpm test that failed (1: tests failed) runs once more, alone: their
# daemons run on the real clock (the realtime ones held to the SPEC's
# bounds: 500 Hz, the 500 ms timeout), which a host running at half speed,
# or a neighbour's burst, can break for one run. The bounds are unchanged;
# both results are printed, and a test that fails again fails its pass.
if [ $second = 1 ] || [ $third = 1 ]; then
    echo "tests/run.sh: the udpm passes had failures (above); those tests once more, one at a time:"
    # shellcheck disable=SC2086
    "$py" -m pytest -q -p no:xdist -m udpm --last-failed --last-failed-no-failures none "$@" $udpm_modules
    again=$?
    [ $second = 1 ] && second=$again
    [ $third = 1 ] && third=$again
fi
for pass in $first $second $third; do
    [ $pass != 0 ] && [ $pass != 5 ] && exit $pass
done
exit 0
