"""A database blip: every backend terminated, the database itself healthy.

The pool held connections the server had already dropped and handed them out, so the next
requests answered 503. common/postgresql/base.py checks each borrowed connection and, at the
first dead one, drains every idle one: after a terminate-all round the next requests answer 200.
A database that refuses connections answers 503 at once, not after the pool's timeout (20 s
before, /readyz 10 s), and serves again as soon as it accepts them.
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


def test_a_database_that_refuses_connections_answers_503_at_once_and_readyz_too(
    live_server, service_client, coupon,
):
    url, key = f"{live_server.url}/api/v1/coupons/{coupon.pk}", service_client[1]
    assert statuses(url, key, 1) == Counter({200: 1})
    database = connection.settings_dict["NAME"]
    connection.close()
    pool = connection.pool
    # Were a request to wait for the pool, it would wait past the client's 30 s and fail.
    timeout, pool.timeout = pool.timeout, 120.0
    with owner_connection() as owner:
        owner.execute(f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS false')
        try:
            terminate_backends(database)
            answers = [get(url, key) for _ in range(3)]
            ready = urllib.request.Request(f"{live_server.url}/readyz")
            try:
                urllib.request.urlopen(ready, timeout=30)
                readyz = 200
            except urllib.error.HTTPError as error:
                readyz = error.code
        finally:
            owner.execute(f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS true')
            pool.timeout = timeout

    assert [(status, body["error"]["code"]) for status, _, body in answers] \
        == [(503, "SERVICE_UNAVAILABLE")] * 3
    assert all(int(headers["Retry-After"]) > 0 for _, headers, _ in answers)
    assert readyz == 503
    # Back up: the pool reconnects and the next request is served.
    assert statuses(url, key, 1) == Counter({200: 1})
