"""The background processes' own records, read-only: what reconciliation found and when it ran,
and what each prune removed. Findings are resolved in the console or the API (operations.reconcile),
never here."""

from django.contrib import admin

from coupons import models
from coupons.admin import ReadOnlyAdmin


@admin.register(models.Finding)
class FindingAdmin(ReadOnlyAdmin):
    list_display = ["id", "kind", "severity", "coupon", "status", "repair", "first_seen_at",
                    "last_seen_at", "resolved_by"]
    list_filter = ["status", "severity", "kind"]
    search_fields = ["=coupon__id", "subject"]


@admin.register(models.ReconciliationRun)
class ReconciliationRunAdmin(ReadOnlyAdmin):
    list_display = ["id", "started_at", "finished_at", "started_by", "coupons_checked",
                    "found_new", "still_open", "closed"]


@admin.register(models.PruneRun)
class PruneRunAdmin(ReadOnlyAdmin):
    list_display = ["id", "ran_at", "outbox_before", "outbox_deleted", "idempotency_deleted",
                    "inbox_deleted"]
