from django.apps import AppConfig


class TimelineConfig(AppConfig):
    """Read models and console pages that merge a coupon's history (the timeline issue)."""

    name = "timeline"

    def ready(self):
        # Connects the sign-in receiver that puts the person's time zone in their session.
        from timeline import time_zones  # noqa: F401
