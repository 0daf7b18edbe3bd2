"""The keyed chain against someone who can rewrite the database but does not hold the key.

The attacker: owner rights (triggers off), the project's own hash functions, every
row of the coupon rewritten to tell another story. Without LEDGER_CHAIN_KEYS the check still
names the first forged row. Rows written before the chain was keyed verify under the old rule
and are pinned by their sealed prefix, so a downgrade to the unkeyed rule is caught too.
"""

import copy
import hashlib
import hmac
import importlib

import pytest
from django.apps import apps
from django.db import connection

from coupons.evidence.ledger_chain import canonical_json, chained_hash
from coupons.evidence.replay import coupon_check
from coupons.models import (
    CouponLock,
    CouponOperation,
    OrderCoupon,
    Redemption,
    UnkeyedLedgerPrefix,
    UserCoupon,
)
from coupons.services import coupon_issue, coupon_redeem, coupon_void
from tests.app_role import as_owner
from tests.conftest import lock

pytestmark = pytest.mark.django_db
HISTORY_TABLES = [CouponOperation, CouponLock, OrderCoupon, Redemption, UserCoupon]
STOLEN_LOOKALIKE = "t1:not-the-real-key-but-the-right-key-id-and-length"


@pytest.fixture
def redeemed(coupon, ctx):
    """ISSUE, LOCK (order-A), REDEEM (P-1), VOID: the REDEEM is not the last row."""
    _, proof = lock(coupon, ctx)
    coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id="P-1", ctx=ctx)
    coupon_void(coupon_id=coupon.pk, expected_version=3, reason="fraud review", ctx=ctx)
    coupon.refresh_from_db()
    return coupon


def raw(sql, params=()):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def as_owner_with_triggers_off(write):
    """What the owner of the tables can do: DISABLE TRIGGER USER, write, enable again."""
    with as_owner():
        raw("SET CONSTRAINTS ALL IMMEDIATE")
        for model in HISTORY_TABLES:
            raw(f"ALTER TABLE {model._meta.db_table} DISABLE TRIGGER USER")
        try:
            write()
        finally:
            raw("SET CONSTRAINTS ALL IMMEDIATE")
            for model in HISTORY_TABLES:
                raw(f"ALTER TABLE {model._meta.db_table} ENABLE TRIGGER USER")


def wrong_key_hash(row, prev_hash):
    """HMAC under a key the attacker guessed (right id, wrong secret)."""
    key = STOLEN_LOOKALIKE.partition(":")[2].encode()
    return hmac.new(key, f"ledger\n{prev_hash}\n{canonical_json(row)}".encode(),
                    hashlib.sha256).hexdigest()


def rewrite_story(coupon, rehash, *, key_id):
    """The rewrite attack on coupon 41: LOCK and REDEEM now say order o-attacker and payment
    p-forged, the lock, binding and redemption rows agree, every later row re-chained."""
    rows = list(CouponOperation.objects.filter(coupon=coupon).order_by("to_version"))
    lock_id = rows[1].lock_id

    def write():
        CouponLock.objects.filter(pk=lock_id).update(order_id="o-attacker")
        OrderCoupon.objects.filter(lock_id=lock_id).update(order_id="o-attacker")
        Redemption.objects.filter(lock_id=lock_id).update(order_id="o-attacker",
                                                          payment_id="p-forged")
        prev_hash = rows[0].content_hash
        for row in rows[1:]:
            forged = copy.copy(row)
            if row.op_type in ("LOCK", "REDEEM"):
                forged.order_id = "o-attacker"
            if row.op_type == "REDEEM":
                forged.payment_id = "p-forged"
            forged.prev_hash, forged.chain_key_id = prev_hash, key_id
            forged.content_hash = rehash(forged, prev_hash)
            CouponOperation.objects.filter(pk=row.pk).update(
                order_id=forged.order_id, payment_id=forged.payment_id, prev_hash=prev_hash,
                chain_key_id=key_id, content_hash=forged.content_hash)
            prev_hash = forged.content_hash

    as_owner_with_triggers_off(write)


def chain_problems(api, coupon) -> list[str]:
    body = api.get(f"/api/v1/coupons/{coupon.pk}/check").json()
    assert body["ok"] is False
    return next(item for item in body["invariants"] if item["number"] == 7)["problems"]


def test_an_owner_who_rechains_with_the_unkeyed_rule_is_caught(redeemed, api,
                                                                  broken_on_purpose):
    broken_on_purpose.add(redeemed.pk)
    rewrite_story(redeemed, chained_hash, key_id="t1")

    problems = chain_problems(api, redeemed)

    assert problems[0] == "hash chain broken at v2 (LOCK): the row was changed after it was written"
    assert len(problems) == 3  # LOCK, REDEEM and VOID: every re-chained row


@pytest.mark.parametrize("key_id", ["t1", "t9"])
def test_a_rechain_under_a_guessed_key_is_caught(redeemed, api, broken_on_purpose, key_id):
    broken_on_purpose.add(redeemed.pk)
    rewrite_story(redeemed, wrong_key_hash, key_id=key_id)

    problems = chain_problems(api, redeemed)

    if key_id == "t1":
        assert problems[0] == ("hash chain broken at v2 (LOCK): the row was changed after it "
                               "was written")
    else:
        assert problems[0] == ("hash chain broken at v2 (LOCK): keyed with key id 't9', which "
                               "LEDGER_CHAIN_KEYS does not hold")


def test_a_downgrade_to_the_unkeyed_rule_is_caught(redeemed, api, broken_on_purpose):
    """Key id cleared and every row re-chained with plain SHA-256, as rows written before the
    chain was keyed are: the coupon had no such rows, so none may appear."""
    broken_on_purpose.add(redeemed.pk)
    rewrite_story(redeemed, chained_hash, key_id="")

    assert chain_problems(api, redeemed) == [
        "hash chain broken: unkeyed rows on a coupon that had none when the chain was keyed"
    ]


def test_a_downgrade_with_a_forged_prefix_record_is_caught(redeemed, api, broken_on_purpose):
    broken_on_purpose.add(redeemed.pk)
    rewrite_story(redeemed, chained_hash, key_id="")
    head = CouponOperation.objects.filter(coupon=redeemed).order_by("-to_version").first()
    UnkeyedLedgerPrefix.objects.create(coupon=redeemed, through_version=head.to_version,
                                       head_hash=head.content_hash, seal="t1:" + "0" * 64)

    problems = chain_problems(api, redeemed)

    assert problems == ["hash chain broken: the record of rows written before the chain was "
                        "keyed is forged (its seal does not match)"]


def unkeyed_history(coupon):
    """The coupon as it was before migration 0015: 0006's unkeyed chain, then 0015's prefix."""
    backfill = importlib.import_module("coupons.migrations.0006_ledger_hash_chain")
    keying = importlib.import_module("coupons.migrations.0015_evidence_seals")
    as_owner_with_triggers_off(lambda: (
        CouponOperation.objects.filter(coupon=coupon).update(chain_key_id=""),
        backfill.backfill_hash_chain(apps, None),
    ))
    keying.record_unkeyed_prefixes(apps, None)


def test_rows_written_before_the_chain_was_keyed_verify_and_say_so(redeemed, ctx, api):
    unkeyed_history(redeemed)
    assert UnkeyedLedgerPrefix.objects.get(coupon=redeemed).through_version == 4

    body = api.get(f"/api/v1/coupons/{redeemed.pk}/check").json()

    assert body["ok"] is True
    assert body["notes"] == ["v1–v4 were written before the chain was keyed: they verify under "
                             "the unkeyed SHA-256 rule, and the keyed seal of v4's hash pins "
                             "them"]


def test_a_keyed_row_follows_the_unkeyed_ones(coupon, ctx):
    unkeyed_history(coupon)
    _, proof = lock(coupon, ctx)

    rows = list(CouponOperation.objects.filter(coupon=coupon).order_by("to_version"))
    assert [row.chain_key_id for row in rows] == ["", "t1"]
    assert rows[1].prev_hash == rows[0].content_hash
    coupon.refresh_from_db()
    assert coupon_check(coupon).ok


def test_a_rechained_rewrite_of_the_unkeyed_rows_is_caught(redeemed, api, broken_on_purpose):
    broken_on_purpose.add(redeemed.pk)
    unkeyed_history(redeemed)
    rewrite_story(redeemed, chained_hash, key_id="")

    assert chain_problems(api, redeemed) == [
        "hash chain broken at v4 (VOID): the rows written before the chain was keyed were "
        "rewritten"
    ]


def test_an_unkeyed_row_after_the_prefix_is_a_downgrade(redeemed, api, broken_on_purpose):
    """A row appended with the old rule after 0015 (forged by someone without the key)."""
    broken_on_purpose.add(redeemed.pk)
    unkeyed_history(redeemed)
    void = CouponOperation.objects.get(coupon=redeemed, to_version=4)
    forged = copy.copy(void)
    forged.pk, forged.from_version, forged.to_version = None, 4, 5
    forged.from_state = forged.to_state = "VOID"
    forged.reason, forged.prev_hash, forged.chain_key_id = "forged", void.content_hash, ""
    forged.content_hash = chained_hash(forged, forged.prev_hash)
    CouponOperation.objects.bulk_create([forged])

    problems = chain_problems(api, redeemed)

    assert ("hash chain broken at v5 (VOID): an unkeyed row written after the chain was keyed "
            "(a downgrade to the unkeyed rule)") in problems


def test_a_rotated_key_keeps_old_rows_verifying(redeemed, template, ctx, settings,
                                                broken_on_purpose):
    settings.LEDGER_CHAIN_KEYS = {
        "t2": "the-next-test-only-ledger-chain-key-of-32-bytes-or-more",
        **settings.LEDGER_CHAIN_KEYS,
    }
    issued = coupon_issue(template_id=template.pk, user_id="u-rotated", ctx=ctx).coupon

    assert list(CouponOperation.objects.filter(coupon=issued)
                .values_list("chain_key_id", flat=True)) == ["t2"]
    assert coupon_check(redeemed).ok  # every row under t1, now a verify-only key
    assert coupon_check(issued).ok
    # After the test the settings hold t1 alone again: a row under a dropped key no longer
    # verifies (the after-test check requires this coupon to fail).
    broken_on_purpose.add(issued.pk)


def test_a_row_under_a_dropped_key_names_the_key(redeemed, settings):
    settings.LEDGER_CHAIN_KEYS = {"t2": "the-next-test-only-ledger-chain-key-of-32-bytes-or-more"}

    problems = coupon_check(redeemed).violations[7]

    assert problems[0] == ("hash chain broken at v1 (ISSUE): keyed with key id 't1', which "
                           "LEDGER_CHAIN_KEYS does not hold")
