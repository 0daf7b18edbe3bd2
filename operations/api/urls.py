"""Reconciliation's findings, for operators."""

from django.urls import path

from api import converters  # noqa: F401 - registers <dbid:...>

from . import reconciliation_views

urlpatterns = [
    path("reconciliation", reconciliation_views.FindingListApi.as_view(), name="reconciliation"),
    path("reconciliation/<dbid:finding_id>/resolve",
         reconciliation_views.FindingResolveApi.as_view(), name="reconciliation_resolve"),
]
