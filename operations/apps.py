from django.apps import AppConfig


class OperationsConfig(AppConfig):
    """What runs beside the web process: the outbox relay, the fact consumer, reconciliation,
    retention, the metrics, and the demo seeder. No models of its own: it reads and repairs
    the coupon and after-sale rows through their services."""

    name = "operations"
