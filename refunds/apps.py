from django.apps import AppConfig


class RefundsConfig(AppConfig):
    """Refund decisions, return policies and compensations (filled by the refunds issue)."""

    name = "refunds"
