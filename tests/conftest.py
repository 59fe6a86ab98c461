import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


def pytest_collection_modifyitems(config, items):
    """udpm tests only run inside the private network namespace of `make test`
    (tests/netns.sh); anywhere else they fail loudly rather than touch the host
    network or skip silently."""
    if os.environ.get("MOTIOND_NETNS") == "1":
        return
    for item in items:
        if "udpm" in item.keywords:
            item.add_marker(pytest.mark.usefixtures("_require_netns"))


@pytest.fixture
def _require_netns():
    pytest.fail("this test opens udpm:// sockets: run it through `make test` "
                "(tests/netns.sh), which makes a private network namespace")
