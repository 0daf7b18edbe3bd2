"""Leases remember their client; the inbox de-duplicates per sender and by content.

Existing inbox rows get the sender's stable scope (client:<pk> / user:<pk>, as Idempotency-Keys
use) from the name stored in `sender`, and the hash of what they said, computed as the inbox
does (coupons.events.inbox.fact_hash, copied here so this migration never changes with it).
"""

import hashlib
import json
from datetime import UTC

import django.db.models.deletion
from django.db import migrations, models


def fact_hash(fact_type, occurred_at, payload) -> str:
    canonical = json.dumps(
        {"type": fact_type, "occurred_at": occurred_at.astimezone(UTC).isoformat(),
         "payload": payload},
        sort_keys=True, separators=(",", ":"), ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def sender_scope(apps, sender: str) -> str:
    kind, _, name = sender.partition(":")
    if kind == "client":
        client = apps.get_model("coupons", "ServiceClient").objects.filter(name=name).first()
        if client is not None:
            return f"client:{client.pk}"
    if kind == "user":
        User = apps.get_model("auth", "User")  # noqa: N806 - a model class
        user = User.objects.filter(username=name).first()
        if user is not None:
            return f"user:{user.pk}"
    return sender[:64]  # a sender no longer known keeps its name as its scope


def backfill(apps, schema_editor):
    InboxMessage = apps.get_model("coupons", "InboxMessage")  # noqa: N806 - a model class
    for message in InboxMessage.objects.order_by("pk").iterator():
        message.sender_scope = sender_scope(apps, message.sender)
        message.content_hash = fact_hash(message.fact_type, message.occurred_at, message.payload)
        message.save(update_fields=["sender_scope", "content_hash"])


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("coupons", "0003_capabilities"),
    ]

    operations = [
        migrations.AddField(
            model_name="couponlock",
            name="client",
            field=models.ForeignKey(
                blank=True, null=True, on_delete=django.db.models.deletion.PROTECT,
                related_name="+", to="coupons.serviceclient",
                help_text="The service client that took the lease: only it may renew, redeem or "
                          "release it. Empty when a console user or the coordinator took it.",
            ),
        ),
        migrations.AddField(
            model_name="inboxmessage",
            name="sender_scope",
            field=models.CharField(
                default="", max_length=64,
                help_text="Who sent it, by id: client:<pk> or user:<pk>; a rename keeps it.",
            ),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="inboxmessage",
            name="content_hash",
            field=models.CharField(
                default="", max_length=64,
                help_text="SHA-256 of type, occurred_at and payload: a redelivery says the same.",
            ),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="inboxmessage",
            name="sender",
            field=models.CharField(help_text="Who sent it, by name (for people).", max_length=128),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="inboxmessage",
            name="message_id",
            field=models.CharField(max_length=128),
        ),
        migrations.AddConstraint(
            model_name="inboxmessage",
            constraint=models.UniqueConstraint(
                fields=("sender_scope", "message_id"), name="inbox_message_per_sender"
            ),
        ),
    ]
