"""A database blip: every backend terminated, the database itself healthy.

The pool held connections the server had already dropped and handed them out, so the next
requests answered 503. common/postgresql/base.py checks each borrowed connection and, at the
first dead one, drains every idle one: after a terminate-all round the next requests answer 200.
A database that is really down still answers 503.
"""

import json
import threading
import urllib.error
import urllib.request
from collections import Counter

import pytest
from django.db import connection

from tests.faults import owner_connection, terminate_backends

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def fresh_pool_after():
    """The killed pool is still replacing connections in the background: the next test gets a
    new pool, as a new process would."""
    yield
    connection.close()
    connection.close_pool()


def get(url: str, key: str) -> tuple[int, dict, dict]:
    """Status, headers and JSON body of a GET with the service key."""
    request = urllib.request.Request(url, headers={"Authorization": f"Token {key}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.load(error)


def statuses(url: str, key: str, count: int) -> Counter:
    return Counter(get(url, key)[0] for _ in range(count))


def fill_the_pool(url: str, key: str, threads: int = 4) -> None:
    """Concurrent requests, so the pool holds several idle connections (all to be killed)."""
    workers = [threading.Thread(target=statuses, args=(url, key, 3)) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


def test_after_every_backend_is_terminated_the_next_requests_all_answer_200(
    live_server, service_client, coupon,
):
    url, key = f"{live_server.url}/api/v1/coupons/{coupon.pk}", service_client[1]
    fill_the_pool(url, key)
    assert connection.pool.get_stats()["pool_available"] >= 2
    database = connection.settings_dict["NAME"]
    connection.close()  # this thread's connection goes back to the pool, to be killed too

    assert terminate_backends(database) >= 2
    after = statuses(url, key, 10)

    assert after == Counter({200: 10})


def test_a_database_that_is_really_down_still_answers_503(live_server, service_client, coupon):
    url, key = f"{live_server.url}/api/v1/coupons/{coupon.pk}", service_client[1]
    assert statuses(url, key, 1) == Counter({200: 1})
    database = connection.settings_dict["NAME"]
    connection.close()
    pool = connection.pool
    timeout, pool.timeout = pool.timeout, 1.0  # wait 1 s for a connection, not 10
    with owner_connection() as owner:
        owner.execute(f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS false')
        try:
            terminate_backends(database)
            status, headers, body = get(url, key)
        finally:
            owner.execute(f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS true')
            pool.timeout = timeout

    assert status == 503
    assert body["error"]["code"] == "SERVICE_UNAVAILABLE"
    assert int(headers["Retry-After"]) > 0
    # Back up: the pool reconnects and the next request is served.
    assert statuses(url, key, 1) == Counter({200: 1})
