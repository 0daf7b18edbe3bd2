"""What the console remembers per person: not evidence, so neither chained nor append-only."""

from django.conf import settings
from django.db import models


class ConsolePreference(models.Model):
    """A console user's own settings; today the language the console speaks to them."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="console_preference")
    # A code of settings.LANGUAGES ("en", "zh-hans"); checked by timeline.language.
    language = models.CharField(max_length=16)
    updated_at = models.DateTimeField()

    def __str__(self):
        return f"{self.user_id}: {self.language}"
