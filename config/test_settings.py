"""Settings for the test suite: config.settings with explicit test-only secrets.

The secrets are set in the environment before config.settings reads it, so the suite runs the
same start-up checks as a server. Throttle rates are high because the suite sends many requests
per client; tests/api/test_throttling.py lowers them to see a 429.
"""

import os
import tempfile

os.environ.setdefault("DJANGO_SECRET_KEY", "test-only-secret-key-never-used-outside-the-test-suite")
os.environ.setdefault("IDEMPOTENCY_SEAL_SECRET", "test-only-idempotency-seal-secret-of-32-bytes")
os.environ.setdefault("CUSTOMER_PHONE_KEY", "test-only-customer-phone-key-of-32-bytes")
if not os.environ.get("LEASE_TOKEN_SECRETS"):
    os.environ.setdefault("LEASE_TOKEN_SECRET", "test-only-lease-token-secret-of-32-bytes-or-more")
# Test-only checkpoint signing key (base64 of 32 bytes) and a scratch directory for the files;
# tests that read the files point LEDGER_CHECKPOINT_DIR at their own tmp_path.
os.environ.setdefault("LEDGER_SIGNING_KEY", "dGVzdC1vbmx5LWxlZGdlci1zaWduaW5nLWtleS0zMmI=")
if not os.environ.get("LEDGER_CHECKPOINT_DIR"):
    os.environ["LEDGER_CHECKPOINT_DIR"] = tempfile.mkdtemp(prefix="test-checkpoints-")
# setup_db_roles (PostgreSQL) gives the application role this password; tests log in as the
# owner and SET ROLE, so it is never used to connect here.
os.environ.setdefault("COUPON_APP_DB_PASSWORD", "test-only-app-role-password")
# Without DATABASE_URL the suite runs on the checkout's embedded `test` cluster, never the
# demo's (common/embedded_postgres.py).
os.environ.setdefault("EMBEDDED_DATABASE", "test")
# The test client speaks plain HTTP; HTTPS redirects are tested with the production values.
os.environ.setdefault("DJANGO_HTTPS", "0")
# A command's lock and statement timeouts last to the end of its transaction, and most tests
# run in one transaction of their own: there they would bound the test's later setup, and a
# race test's waits on a loaded machine. Long here; tests/coupons/concurrency/test_held_row.py
# sets its own.
os.environ.setdefault("COMMAND_LOCK_TIMEOUT_MS", "30000")
os.environ.setdefault("COMMAND_STATEMENT_TIMEOUT_MS", "120000")

from config.settings import *  # noqa: E402, F403
from config.settings import REST_FRAMEWORK  # noqa: E402

REST_FRAMEWORK = {
    **REST_FRAMEWORK,
    "DEFAULT_THROTTLE_RATES": {"service_client": "100000/min", "user": "100000/min",
                               "anonymous": "100000/min"},
}
