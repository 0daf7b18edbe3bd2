"""Real local clusters beside the main one: pg_auto_failover (bin/ha-cluster) and PgBouncer.

Without the Debian packages these tests skip with the reason, except where HA_TESTS_REQUIRED=1
(set by .ci/run, which installs them): there a missing package fails the run.
"""

import os
import shutil

import pytest


def require(program: str, package: str) -> str:
    """The program's path, or a skip (a failure under HA_TESTS_REQUIRED=1) naming the package."""
    path = shutil.which(program) or next(
        (p for p in (f"/usr/sbin/{program}", f"/usr/bin/{program}") if os.path.exists(p)), None)
    if path is None:
        if os.environ.get("HA_TESTS_REQUIRED") == "1":
            pytest.fail(f"{program} is missing: .ci/run installs Debian's {package}")
        pytest.skip(f"{program} is missing (apt-get install -y {package}); CI installs it")
    return path
