from decimal import Decimal

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from coupons.evidence.journal import content_hash, content_text
from coupons.evidence.tips import journal_tip
from coupons.models import JournalEntry
from coupons.services import coupon_issue, coupon_redeem, template_create
from refunds.models import RefundCoupon
from refunds.services import refund_receive
from tests.app_role import past_the_triggers
from tests.conftest import lock


def redeem(coupon, ctx, order_id="order-A", amount="300.00", payment_id=None):
    """Lock and redeem for the order through the services; answers the redemption."""
    _, proof = lock(coupon, ctx, order_id=order_id, amount=amount)
    return coupon_redeem(coupon_id=coupon.pk, lease=proof,
                         payment_id=payment_id or f"pay-{order_id}", ctx=ctx).redemption


def shown(decision_id) -> str:
    """The decision's version now, as an operator who just read it names it (seen_entry)."""
    return journal_tip(RefundCoupon, decision_id) or "0" * 64


def refund(ctx, refund_id, order_id="order-A", amount="270.00", refund_type="FULL", **extra):
    return refund_receive(refund_id=refund_id, order_id=order_id, payment_id=f"pay-{order_id}",
                          refund_amount=Decimal(amount), refund_type=refund_type, ctx=ctx, **extra)


@pytest.fixture
def percent_template(clock):
    return template_create(
        code="pct15", name="15% off 100, at most 50", kind="PERCENT_OFF",
        percent_off=Decimal("15.00"), max_discount=Decimal("50.00"),
        min_order_amount=Decimal("100.00"), valid_days=30,
    )


@pytest.fixture
def exchange_template(clock):
    return template_create(
        code="latte", name="One latte", kind="EXCHANGE", face_value=Decimal("28.00"),
        valid_days=30, returnable=False,
    )


def issue(template, ctx, user_id="u1"):
    return coupon_issue(template_id=template.pk, user_id=user_id, ctx=ctx).coupon


def person(group_name, username=None):
    user = User.objects.create_user(username or group_name, password="x")
    user.groups.add(Group.objects.get(name=group_name))
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def operator(db):
    return person("operator")


@pytest.fixture
def support(db):
    return person("support")


@pytest.fixture
def policy_admin(db):
    return person("policy_admin", "policy")


@pytest.fixture
def default_policy(db):
    """The default policy as its migration makes it: a transactional test's flush removes
    migration data, so the PostgreSQL race tests put it back."""
    import importlib

    from refunds.models import ReturnPolicy, ReturnPolicyVersion

    shipped = importlib.import_module("refunds.migrations.0002_return_policies")
    policy, _ = ReturnPolicy.objects.get_or_create(
        code="default", defaults={"name": "Default return policy",
                                  "created_at": shipped.DEFAULT_SINCE})
    ReturnPolicyVersion.objects.get_or_create(
        policy=policy, number=1,
        defaults={"status": "PUBLISHED", "rules": shipped.DEFAULT_RULES,
                  "created_by": "migration", "created_at": shipped.DEFAULT_SINCE,
                  "published_by": "migration", "published_at": shipped.DEFAULT_SINCE},
    )
    return policy


def moved_past_the_services(model, pk, kind, **columns):
    """A row moved by someone past every guard (the owner's login, triggers off: the app's
    login may not move these columns, nor a row waiting for its approval) who also appends the
    entry that says so, so that the row still folds. Only the version the decider saw tells
    the change."""
    table = model._meta.db_table
    tip = journal_tip(model, pk)
    body = {"actor": "user:mallory", "at": timezone.now().isoformat(timespec="microseconds"),
            "kind": kind, "parent": tip, "row": columns, "table": model._meta.label_lower}
    content = content_text(pk, body)
    with past_the_triggers(), connection.cursor() as cursor:
        assignments = ", ".join(f"{connection.ops.quote_name(name)} = %s" for name in columns)
        cursor.execute(f"UPDATE {table} SET {assignments} WHERE id = %s",  # noqa: S608
                       [*columns.values(), pk])
        JournalEntry.objects.create(subject=body["table"], subject_id=pk, kind=kind,
                                    actor=body["actor"], parent_hash=tip, content=content,
                                    content_hash=content_hash(content), created_at=timezone.now())
