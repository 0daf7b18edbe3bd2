"""What a failing dependency costs a request: Redis stopped, one coupon's row held by a stuck
session, a database that refuses connections. Prints each scenario's answers and how long they
took (the figures docs/operating.md quotes beside the issue's "before").

Rerun (on Django's test database of DATABASE_URL's server, or the embedded `test` cluster):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
        .venv/bin/python scripts/benchmarks/bench_faults.py

It starts a redis-server of its own on a free port of 7220-7239 (tests/faults.py) and stops it.
"""

import statistics
import sys
import time
import uuid
from collections import Counter
from decimal import Decimal

from bench_setup import ROOT, client_test_databases, load_average

ORDER = {"order_id": "order-A", "user_id": "u1", "order_amount": "300.00"}


def timed(call) -> tuple[int, float]:
    started = time.perf_counter()
    status = call().status_code
    return status, time.perf_counter() - started


def summary(name: str, answers: list[tuple[int, float]]) -> None:
    times = [seconds for _, seconds in answers]
    print(f"{name}: {dict(Counter(status for status, _ in answers))}, "
          f"median {statistics.median(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms")


def redis_stopped(api, coupon) -> None:
    import os
    import runpy

    from django.test.utils import override_settings

    from tests.faults import RedisServer

    redis = RedisServer()
    os.environ["REDIS_URL"] = redis.url
    caches = runpy.run_path(str(ROOT / "config" / "settings.py"))["CACHES"]
    try:
        with override_settings(CACHES=caches):
            api.get(f"/api/v1/coupons/{coupon.pk}")
            redis.stop()
            summary("Redis stopped, 50 GETs",
                    [timed(lambda: api.get(f"/api/v1/coupons/{coupon.pk}")) for _ in range(50)])
    finally:
        redis.stop()


def row_held(api, coupons) -> None:
    import psycopg
    from django.db import connection

    held, others = coupons[0], coupons[1:]
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    with psycopg.connect(**params) as holder:
        holder.execute("SELECT 1 FROM coupons_usercoupon WHERE id = %s FOR UPDATE", [held.pk])

        def lock(coupon):
            return lambda: api.post(f"/api/v1/coupons/{coupon.pk}/lock", ORDER, format="json",
                                    HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()))

        summary("one coupon's row held, a LOCK of it", [timed(lock(held))])
        summary("one coupon's row held, LOCKs of 20 others",
                [timed(lock(other)) for other in others])
        holder.rollback()


def database_refusing(api, coupon) -> None:
    import psycopg
    from django.db import connection
    from django.test import Client

    name = connection.settings_dict["NAME"]
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    connection.close()
    with psycopg.connect(**{**params, "dbname": "postgres"}, autocommit=True) as owner:
        owner.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
        try:
            owner.execute("SELECT pg_terminate_backend(pid, 30000) FROM pg_stat_activity "
                          "WHERE datname = %s AND pid <> pg_backend_pid()", [name])
            summary("database refusing, 5 GETs",
                    [timed(lambda: api.get(f"/api/v1/coupons/{coupon.pk}")) for _ in range(5)])
            summary("database refusing, /readyz", [timed(lambda: Client().get("/readyz"))])
        finally:
            owner.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')


def main() -> None:
    print(f"load average {load_average()}")
    with client_test_databases():
        sys.path.insert(0, str(ROOT))
        from rest_framework.test import APIClient

        from coupons.services import coupon_issue, service_client_create, template_create
        from coupons.write.context import CommandContext
        from tests.conftest import ALL_GRANTS

        ctx = CommandContext(actor="bench")
        template = template_create(code="off30", name="30 off 200", kind="AMOUNT_OFF",
                                   face_value=Decimal("30.00"),
                                   min_order_amount=Decimal("200.00"), valid_days=30)
        coupons = [coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
                   for _ in range(21)]
        _, key = service_client_create(name="bench-faults", **ALL_GRANTS)
        api = APIClient(raise_request_exception=False)
        api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        from django.conf import settings

        settings.COUPONS = {**settings.COUPONS, "COMMAND_LOCK_TIMEOUT_MS": 2000}
        redis_stopped(api, coupons[0])
        row_held(api, coupons)
        database_refusing(api, coupons[0])
    print(f"load average {load_average()}")


if __name__ == "__main__":
    main()
