"""What the console keeps: per-person settings and saved filters (moved and deleted freely), and
the team's evidence, staff notes and the view log (append-only, journaled, under triggers)."""

from django.conf import settings
from django.db import models

from coupons.models.append_only import AppendOnlyModel, append_only_triggers
from coupons.models.journal import Journaled
from timeline.capabilities import ConsoleCapability


class ConsolePreference(models.Model):
    """A console user's own settings: the language the console speaks to them and the time
    zone it writes moments in."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="console_preference")
    # A code of settings.LANGUAGES ("en", "zh-hans"); checked by console.language.
    # Empty until they choose one (a time zone may be chosen first).
    language = models.CharField(max_length=16, blank=True, default="")
    # An IANA name ("Asia/Shanghai"), checked by console.time_zones; empty: the browser's.
    time_zone = models.CharField(max_length=64, blank=True, default="")
    updated_at = models.DateTimeField()

    def __str__(self):
        return f"{self.user_id}: {self.language or '-'}, {self.time_zone or 'browser zone'}"


class StaffNote(Journaled, AppendOnlyModel):
    """A note a person wrote on a coupon. An edit is a new note naming the one it replaces, so
    the chain keeps every wording; at most one note replaces another (the unique `replaces`)."""

    # Text that only readers of notes see (coupons.redaction.visible).
    detail_fields = ("text",)

    # The coupon's id, not a foreign key: the console's evidence never holds up a coupon row.
    coupon_id = models.BigIntegerField()
    author = models.CharField(max_length=128)  # "user:<name>", as the ledger names people
    text = models.TextField(max_length=4000)
    replaces = models.OneToOneField("self", null=True, blank=True, on_delete=models.PROTECT,
                                    related_name="replaced_by")
    # The add form's key: a double-submitted form writes one note.
    form_key = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["coupon_id", "created_at"], name="note_coupon_time")]
        triggers = append_only_triggers()
        # The console's capabilities (timeline.capabilities) are this app's permissions.
        default_permissions = ()
        permissions = ConsoleCapability.choices

    def __str__(self):
        return f"note {self.pk} on coupon {self.coupon_id}"


class ViewRecord(Journaled, AppendOnlyModel):
    """One console page a person opened (a coupon, a queue of cases or decisions, a search) or
    one list they exported: who, when, which page. One INSERT per view."""

    class Kind(models.TextChoices):
        VIEW = "VIEW", "view"
        EXPORT = "EXPORT", "export"

    actor = models.CharField(max_length=128)
    kind = models.CharField(max_length=8, choices=Kind.choices, default=Kind.VIEW)
    page = models.CharField(max_length=32)  # the console URL's name: coupon, cases, ...
    path = models.CharField(max_length=500)  # with its query: the filters that were shown
    coupon_id = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(fields=["actor", "created_at"], name="view_actor_time"),
            models.Index(fields=["coupon_id", "created_at"], name="view_coupon_time"),
            models.Index(fields=["created_at"], name="view_time"),
        ]
        triggers = append_only_triggers()

    def __str__(self):
        return f"{self.actor} {self.kind} {self.path}"


class SavedFilter(models.Model):
    """A person's named filter of one list page (search or a queue): its query string."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="saved_filters")
    page = models.CharField(max_length=32)
    name = models.CharField(max_length=80)
    query = models.CharField(max_length=500)
    created_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "page", "name"],
                                               name="saved_filter_name_once")]
        ordering = ["name", "id"]

    def __str__(self):
        return f"{self.page}: {self.name}"
