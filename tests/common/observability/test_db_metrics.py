"""django_db_* counted once per request (common/db_metrics.py), not by a wrapper
that calls the metrics around every statement."""

import pytest
from django.db import DatabaseError, connection, transaction
from django.http import HttpResponse
from django.test import RequestFactory
from prometheus_client import REGISTRY

from common.db_metrics import DatabaseMetricsMiddleware

pytestmark = pytest.mark.django_db


def sample(name: str, **labels) -> float:
    labels = {"alias": "default", "vendor": "postgresql", **labels}
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_a_request_adds_every_statement_it_ran(api, coupon):
    seen = []

    def watch(execute, sql, params, many, context):
        seen.append(sql)
        return execute(sql, params, many, context)

    before = sample("django_db_execute_total")
    with connection.execute_wrapper(watch):
        response = api.post(f"/api/v1/coupons/{coupon.pk}/lock",
                            {"order_id": "A", "user_id": "u1", "order_amount": "300.00"},
                            format="json", HTTP_IDEMPOTENCY_KEY="k-1")

    assert response.status_code == 200
    assert len(seen) > 3
    assert sample("django_db_execute_total") - before == len(seen)


def test_a_failed_statement_is_counted_by_its_type():
    def broken_view(request):
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute("SELECT no_such_column FROM no_such_table")
        except DatabaseError as error:
            return HttpResponse(type(error).__name__)
        return HttpResponse("no error")

    before = {name: sample("django_db_errors_total", type=name)
              for name in ("OperationalError", "ProgrammingError")}

    kind = DatabaseMetricsMiddleware(broken_view)(RequestFactory().get("/")).content.decode()

    assert kind in before
    assert sample("django_db_errors_total", type=kind) - before[kind] == 1


def test_the_database_backend_is_djangos_own():
    # django-prometheus's backends time and count around every execute.
    with connection.cursor() as cursor:
        assert not type(cursor.cursor).__module__.startswith("django_prometheus")
    assert not type(connection).__module__.startswith("django_prometheus")
