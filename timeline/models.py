"""What the console remembers per person: not evidence, so neither chained nor append-only."""

from django.conf import settings
from django.db import models


class ConsolePreference(models.Model):
    """A console user's own settings: the language the console speaks to them and the time
    zone it writes moments in."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="console_preference")
    # A code of settings.LANGUAGES ("en", "zh-hans"); checked by timeline.language.
    # Empty until they choose one (a time zone may be chosen first).
    language = models.CharField(max_length=16, blank=True, default="")
    # An IANA name ("Asia/Shanghai"), checked by timeline.time_zones; empty: the browser's.
    time_zone = models.CharField(max_length=64, blank=True, default="")
    updated_at = models.DateTimeField()

    def __str__(self):
        return f"{self.user_id}: {self.language or '-'}, {self.time_zone or 'browser zone'}"
