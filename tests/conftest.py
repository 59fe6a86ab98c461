import contextlib
import ctypes
import logging
import os
import signal
import subprocess
import sys
import time

import pytest
import structlog

sys.path.insert(0, os.path.dirname(__file__))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """udpm tests only run inside the private network namespace of `make test`
    (tests/netns.sh); anywhere else they fail loudly rather than touch the host
    network or skip silently.

    Spread over xdist workers test by test (`--dist loadgroup`, tests/run.sh),
    except a module with a fixture built once per module (a built wheel, a
    Ray cluster, a stood robot, a copied tree): its tests stay together in
    one worker, so the fixture is built once.

    Under tests/run.sh, the modules that hold udpm tests are listed for its
    udpm passes (run first, before `-m` deselects any test)."""
    _list_udpm_modules(items)
    for item in items:
        if _keeps_a_module_fixture(item):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))
    if os.environ.get("MOTIOND_NETNS") == "1":
        return
    for item in items:
        if "udpm" in item.keywords:
            item.add_marker(pytest.mark.usefixtures("_require_netns"))


def _list_udpm_modules(items: list[pytest.Item]) -> None:
    shared = os.environ.get("MOTIOND_TEST_SHARED")
    if not shared or not os.path.isdir(shared):
        return
    modules = sorted({os.path.relpath(item.path) for item in items if "udpm" in item.keywords})
    path = os.path.join(shared, "udpm_modules")
    part = f"{path}.{os.getpid()}"
    with open(part, "w") as f:
        f.write("".join(f"{m}\n" for m in modules))
    os.replace(part, path)      # two workers write the same list


def _keeps_a_module_fixture(item):
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(d.scope in ("module", "package", "session") and d.baseid
               for defs in info.name2fixturedefs.values() for d in defs)


@pytest.fixture
def _require_netns():
    pytest.fail("this test opens udpm:// sockets: run it through `make test` "
                "(tests/netns.sh), which makes a private network namespace")


CLONE_NEWNET = 0x40000000


def _own_network_namespace() -> None:
    """This xdist worker's own network namespace, multicast on its loopback
    as tests/netns.sh sets it up: the udpm tests of two workers then never
    hear each other's daemons, though both use the config's multicast
    groups. Taken from inside the namespace make test made (never the
    host's), by the thread that runs the tests: the daemons and threads it
    starts are born in it."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"unshare(CLONE_NEWNET) for xdist worker's own network namespace: {os.strerror(err)}")
    for args in (("link", "set", "lo", "up"), ("link", "set", "lo", "multicast", "on"),
                 ("route", "add", "224.0.0.0/4", "dev", "lo")):
        subprocess.run(["ip", *args], check=True)


PR_CAPBSET_DROP, CAP_SYS_NICE = 24, 23


def _no_realtime_priority() -> None:
    """The processes this worker starts cannot take SCHED_FIFO (CAP_SYS_NICE
    leaves the bounding set, so no program it runs gets it): each daemon
    logs realtime_degraded and ticks at the normal priority, as for a user
    without the rights (docs/GUIDE.md "Real-time priority"). Two daemons at
    FIFO priority on a two-core machine, each with its MPC worker, starved
    the tests' own clients past the 500 ms heartbeat (the robot lay down
    mid-trot). The realtime tests, which hold daemons to the SPEC's clock
    bounds, run one at a time in a pass of their own with the priority."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_CAPBSET_DROP, CAP_SYS_NICE, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_CAPBSET_DROP, CAP_SYS_NICE): {os.strerror(err)}")


def pytest_configure(config):
    if os.environ.get("MOTIOND_NETNS") == "1" and os.environ.get("PYTEST_XDIST_WORKER"):
        _own_network_namespace()
        if os.environ.get("MOTIOND_TEST_NO_FIFO") == "1":
            _no_realtime_priority()
    _quiet_structlog()


def _quiet_structlog() -> None:
    """Log every level (capture_logs sees debug events; a failing test shows
    what was logged) but render it cheaply: structlog's default console
    rendering, with colours and a timestamp, costs some 60 us a line, and
    floods and fuzzers log hundreds of thousands of lines."""
    structlog.configure(
        processors=[structlog.processors.add_log_level,
                    structlog.processors.KeyValueRenderer(key_order=["level", "event"])],
        wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG),
        logger_factory=structlog.WriteLoggerFactory(),
        cache_logger_on_first_use=False)


PR_SET_CHILD_SUBREAPER = 36


def _descendants() -> dict[int, str]:
    """This process's live descendants (zombies left out): pid -> command line.
    With this process a child subreaper (below), a daemon whose parent ended
    is still one of them."""
    parent: dict[int, int] = {}
    alive: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        parent[int(entry)] = int(fields[1])
        if fields[0] != "Z":
            alive[int(entry)] = cmd
    me = os.getpid()
    out = {}
    for pid, cmd in alive.items():
        p, seen = parent.get(pid), 0
        while p and p != me and seen < 64:
            p, seen = parent.get(p), seen + 1
        if p == me:
            out[pid] = cmd
    return out


@pytest.fixture(autouse=True)
def _nothing_left_running(request):
    """A udpm test leaves no process behind: a daemon or bridge still
    publishing would be heard by the next test on the same multicast groups
    (a joint_state from a robot that is not the next test's). What is left
    after 2 s is killed, and the test that left it fails, naming it."""
    if request.node.get_closest_marker("udpm") is None:
        yield
        return
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    before = set(_descendants())
    yield
    end = time.monotonic() + 2.0
    left = {pid: cmd for pid, cmd in _descendants().items() if pid not in before}
    while left and time.monotonic() < end:
        time.sleep(0.05)
        left = {pid: cmd for pid, cmd in _descendants().items() if pid not in before}
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    if left:
        pytest.fail("left running after the test (killed now): "
                    + "; ".join(f"{pid} {cmd[:120]}" for pid, cmd in sorted(left.items())), pytrace=False)
