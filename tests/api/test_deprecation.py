"""The one way an operation says it is on its way out (api.deprecation; docs/api.md, Versions):
its answers carry Deprecation and Sunset, refusals too, and the schema marks it deprecated.
Nothing in v1 is deprecated, so a view made here carries the mark."""

from datetime import date

import pytest
from django.urls import path
from drf_spectacular.generators import SchemaGenerator
from rest_framework.response import Response
from rest_framework.test import APIClient
from rest_framework.views import APIView

from api.deprecation import Deprecation, deprecated
from config.api_urls import urlpatterns as api_urlpatterns

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.api.test_deprecation")]


class OldCouponsApi(APIView):
    @deprecated(on=date(2026, 7, 1), sunset=date(2027, 1, 1), successor="Use `GET coupons`.")
    def get(self, request):
        """The old list of coupons."""
        return Response({"ok": True})

    def post(self, request):
        """Not on its way out."""
        return Response({"ok": True})


urlpatterns = [path("api/v1/old-coupons", OldCouponsApi.as_view())]

EXPECTED = {"Deprecation": "@1782864000", "Sunset": "Fri, 01 Jan 2027 00:00:00 GMT"}


def test_a_deprecated_operation_says_when_it_was_deprecated_and_when_it_goes(api):
    response = api.get("/api/v1/old-coupons")

    assert response.status_code == 200
    assert {name: response[name] for name in EXPECTED} == EXPECTED


def test_its_refusals_say_so_too():
    response = APIClient().get("/api/v1/old-coupons")

    assert response.status_code == 401
    assert {name: response[name] for name in EXPECTED} == EXPECTED


def test_the_other_methods_of_the_view_do_not(api):
    response = api.post("/api/v1/old-coupons", {}, format="json")

    assert "Deprecation" not in response and "Sunset" not in response


def test_the_schema_marks_it_deprecated_and_declares_the_headers():
    schema = SchemaGenerator(patterns=urlpatterns).get_schema(request=None, public=True)
    old = schema["paths"]["/api/v1/old-coupons"]

    assert old["get"]["deprecated"] is True
    assert "Use `GET coupons`." in old["get"]["description"]
    headers = old["get"]["responses"]["200"]["headers"]
    assert {name: headers[name]["schema"]["enum"] for name in EXPECTED} == {
        name: [value] for name, value in EXPECTED.items()}
    assert "deprecated" not in old["post"]


def test_nothing_in_v1_is_deprecated_today():
    schema = SchemaGenerator(patterns=api_urlpatterns).get_schema(request=None, public=True)

    assert not [(path_, method) for path_, item in schema["paths"].items()
                for method, operation in item.items() if operation.get("deprecated")]


def test_a_sunset_comes_at_least_six_months_after_the_deprecation():
    with pytest.raises(ValueError):
        Deprecation(date(2026, 7, 1), date(2026, 10, 1))
