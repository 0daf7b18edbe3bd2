"""The OpenAPI schema names the capability of every operation, the one its view checks."""

import re

import pytest
from django.urls import path, resolve
from drf_spectacular.generators import SchemaGenerator
from rest_framework.response import Response
from rest_framework.views import APIView

from api.permissions import required_capability

pytestmark = pytest.mark.django_db

HTTP_METHODS = {"get", "post", "put", "patch", "delete"}


def operations(schema):
    for route, item in schema["paths"].items():
        for method, operation in item.items():
            if method in HTTP_METHODS:
                yield method.upper(), route, operation


def test_every_operation_names_the_capability_its_view_checks(api):
    schema = api.get("/api/v1/schema/", {"format": "json"}).json()
    documented = list(operations(schema))

    assert len(documented) >= 18
    for method, route, operation in documented:
        view = resolve(re.sub(r"\{\w+\}", "1", route)).func.cls
        needed = required_capability(view, method)
        assert needed is not None, (method, route)
        assert operation["x-capability"] == needed.value, (method, route)
        assert f"Needs the `{needed.value}` capability" in operation["description"]


class UndeclaredWrite(APIView):
    def post(self, request):
        return Response({})


def test_a_write_nobody_declared_is_documented_as_closed():
    generator = SchemaGenerator(patterns=[path("undeclared", UndeclaredWrite.as_view())])

    operation = generator.get_schema(request=None, public=True)["paths"]["/undeclared"]["post"]

    assert operation["description"] == "No caller may do this."
    assert operation["x-capability"] is None
