from django.apps import AppConfig


class TimelineConfig(AppConfig):
    """Read models and console pages that merge a coupon's history (the timeline issue)."""

    name = "timeline"
