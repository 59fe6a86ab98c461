import logging
import os
import sys

import pytest
import structlog

sys.path.insert(0, os.path.dirname(__file__))


def pytest_collection_modifyitems(config, items):
    """udpm tests only run inside the private network namespace of `make test`
    (tests/netns.sh); anywhere else they fail loudly rather than touch the host
    network or skip silently.

    Spread over xdist workers test by test (`--dist loadgroup`, tests/run.sh),
    except a module with a fixture built once per module (a built wheel, a
    Ray cluster, a stood robot, a copied tree): its tests stay together in
    one worker, so the fixture is built once."""
    for item in items:
        if _keeps_a_module_fixture(item):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))
    if os.environ.get("MOTIOND_NETNS") == "1":
        return
    for item in items:
        if "udpm" in item.keywords:
            item.add_marker(pytest.mark.usefixtures("_require_netns"))


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


def pytest_configure(config):
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
