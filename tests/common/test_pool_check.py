"""A borrowed pooled connection costs a round trip only when the server spoke to it while it was
idle (common/postgresql/base.py): a terminated backend makes its socket readable."""

import pytest

from common.postgresql.base import _heard_from_server
from tests.faults import owner_connection

pytestmark = pytest.mark.django_db


def test_an_idle_connection_the_server_left_alone_needs_no_query():
    with owner_connection() as idle:
        idle.execute("SELECT 1")

        assert not _heard_from_server(idle)


def test_a_terminated_backend_is_heard():
    with owner_connection() as idle, owner_connection() as administrator:
        # The second argument waits until the backend has exited (and said so to its client).
        administrator.execute("SELECT pg_terminate_backend(%s, 5000)", [idle.info.backend_pid])

        assert _heard_from_server(idle)
