"""A long-running process (relay, consumer, scanner loop) holds one database connection, never a
pool that grows: with the server's pool, the relay and the lease scanner kept 10 to 11
connections after a few terminations."""

import copy

import pytest
from django.db import connection

from operations.worker import use_worker_sessions
from tests.faults import terminate_this_threads_backend

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def worker_sessions():
    options = copy.deepcopy(connection.settings_dict.get("OPTIONS", {}))
    use_worker_sessions()
    yield
    connection.close()
    connection.settings_dict["OPTIONS"] = options


def test_a_worker_keeps_one_connection_through_terminations(worker_sessions):
    for _ in range(3):
        terminate_this_threads_backend()
        connection.close()  # what the loops do on a lost connection
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")

            assert cursor.fetchone() == (1,)
    assert connection.pool is None  # nothing that could hold more than this one
