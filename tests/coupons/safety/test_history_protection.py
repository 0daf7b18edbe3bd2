"""History the database protects: triggers on PostgreSQL, and the journal names what got past.

PostgreSQL tests write raw SQL the way a script or a console session would; each refused write
runs in a savepoint so the test can read the row afterwards and see it unchanged.
"""

from contextlib import contextmanager

import pytest
from django.db import DatabaseError, connection, transaction

from coupons.errors import StateConflict
from coupons.evidence.replay import coupon_check
from coupons.models import (
    CommandRejection,
    CouponOperation,
    InboxMessage,
    OrderCoupon,
    OutboxEvent,
    PruneRun,
    Redemption,
)
from coupons.services import coupon_redeem, coupon_release, coupon_void
from coupons.write.context import LeaseProof
from coupons.write.declared import declared_moves
from operations.retention import retention_prune
from tests.conftest import START, lock
from tests.db_clock import db_now

# The triggers hold for every role, the owner included, so these tests write as the owner; what
# the application role may not even attempt is tests/coupons/safety/test_db_roles.py.
pytestmark = [pytest.mark.django_db, pytest.mark.owner_role]

REFUSED = "pgtrigger: Cannot"


@pytest.fixture
def history(coupon, ctx, send):
    """A coupon locked and redeemed (ledger, redemption, outbox rows), a refused command
    (rejection row) and a processed fact (inbox row)."""
    _, proof = lock(coupon, ctx)
    coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id="P-1", ctx=ctx)
    stale = LeaseProof(order_id="order-B", token_hash="0" * 64, expected_version=2)
    with pytest.raises(StateConflict):
        coupon_release(coupon_id=coupon.pk, lease=stale, ctx=ctx)
    assert CommandRejection.objects.count() == 1
    send("OrderClosed", order_id="order-Z")
    coupon.refresh_from_db()
    return coupon


@contextmanager
def triggers_off():
    """Write as a superuser past the triggers would."""
    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET session_replication_role = origin")


@pytest.fixture
def tamper():
    """Edit ledger rows past the triggers; every edited row is put back after the test, so
    the after-test check of tests/conftest.py sees the coupon this test broke on purpose as it
    was, while every other coupon is still checked."""
    originals = []

    def tamper(operation, **changes):
        originals.append((operation.pk, {field: getattr(operation, field) for field in changes}))
        with triggers_off():
            CouponOperation.objects.filter(pk=operation.pk).update(**changes)

    yield tamper
    with triggers_off():
        for pk, values in reversed(originals):
            CouponOperation.objects.filter(pk=pk).update(**values)


def raw(sql, params):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def refused_raw(sql, params) -> str:
    with pytest.raises(DatabaseError) as caught, transaction.atomic():
        raw(sql, params)
    return str(caught.value)


def ledger(coupon):
    return list(CouponOperation.objects.filter(coupon=coupon).order_by("to_version"))


# --- triggers (PostgreSQL) ----------------------------------------------------------------

# table → a column that must never change, and a forged value for it.
PROTECTED = {
    "ledger": (CouponOperation, "actor", "intruder"),
    "redemption": (Redemption, "payment_id", "P-forged"),
    "rejection": (CommandRejection, "error_code", "NOTHING_WRONG"),
    "inbox": (InboxMessage, "order_id", "order-forged"),
    "outbox": (OutboxEvent, "event_type", "CouponForged"),
    "order binding": (OrderCoupon, "order_id", "o-attacker"),
}


@pytest.mark.parametrize(("model", "column", "forged"), PROTECTED.values(), ids=PROTECTED)
def test_raw_update_of_a_history_row_is_refused(history, model, column, forged):
    row = model.objects.order_by("-pk").first()
    before = model.objects.filter(pk=row.pk).values().get()

    error = refused_raw(f"UPDATE {model._meta.db_table} SET {column} = %s WHERE id = %s",
                        [forged, row.pk])

    assert REFUSED in error and model._meta.db_table in error
    assert model.objects.filter(pk=row.pk).values().get() == before


@pytest.mark.parametrize(("model", "column", "forged"), PROTECTED.values(), ids=PROTECTED)
def test_raw_delete_of_a_history_row_is_refused(history, model, column, forged):
    count = model.objects.count()
    row = model.objects.order_by("-pk").first()

    error = refused_raw(f"DELETE FROM {model._meta.db_table} WHERE id = %s", [row.pk])

    assert REFUSED in error
    assert model.objects.count() == count
    assert model.objects.filter(pk=row.pk).exists()


def test_a_prune_run_is_append_only(history):
    """What the missing-event checks trust: a cutoff moved to 2100 would excuse every gap."""
    run = retention_prune()

    moved = refused_raw("UPDATE coupons_prunerun SET outbox_before = '2100-01-01' WHERE id = %s",
                        [run.pk])
    deleted = refused_raw("DELETE FROM coupons_prunerun WHERE id = %s", [run.pk])

    assert REFUSED in moved and REFUSED in deleted
    assert PruneRun.objects.get(pk=run.pk).outbox_before == run.outbox_before


def test_queryset_update_and_delete_cannot_rewrite_a_redeem_row(history):
    """The reproduced hole: QuerySet.update skipped the ORM guard and rewrote a REDEEM row."""
    redeem = CouponOperation.objects.get(coupon=history, op_type="REDEEM")

    with pytest.raises(DatabaseError, match=REFUSED), transaction.atomic():
        CouponOperation.objects.filter(pk=redeem.pk).update(actor="intruder", payment_id="P-9")
    with pytest.raises(DatabaseError, match=REFUSED), transaction.atomic():
        Redemption.objects.filter(coupon=history).update(payment_id="P-9")
    with pytest.raises(DatabaseError, match=REFUSED), transaction.atomic():
        OutboxEvent.objects.filter(operation=redeem)._raw_delete(connection.alias)

    redeem.refresh_from_db()
    assert (redeem.actor, redeem.payment_id) == ("test", "P-1")
    assert Redemption.objects.get(coupon=history).payment_id == "P-1"
    assert OutboxEvent.objects.filter(operation=redeem).exists()


def test_outbox_published_at_is_set_once_and_never_changed_or_cleared(history, clock):
    event = OutboxEvent.objects.order_by("pk").first()
    table = OutboxEvent._meta.db_table

    raw(f"UPDATE {table} SET published_at = %s WHERE id = %s", [START, event.pk])
    event.refresh_from_db()
    stamped = event.published_at
    changed = refused_raw(f"UPDATE {table} SET published_at = %s WHERE id = %s",
                          [clock.now().replace(year=2030), event.pk])
    cleared = refused_raw(f"UPDATE {table} SET published_at = NULL WHERE id = %s", [event.pk])

    assert REFUSED in changed and REFUSED in cleared
    # Not the time the writer sent, the owner's included: the database's clock.
    assert stamped > START and stamped >= db_now()
    event.refresh_from_db()
    assert event.published_at == stamped


def test_inbox_outcome_is_written_once(history, clock):
    message = InboxMessage.objects.create(
        message_id="m-direct", fact_type="OrderClosed", order_id="order-Y", occurred_at=START,
        payload={"order_id": "order-Y"}, sender="test", received_at=START,
    )
    table = InboxMessage._meta.db_table

    raw(f"UPDATE {table} SET outcome = %s WHERE id = %s", ['{"action": "NO_COUPON"}', message.pk])
    error = refused_raw(f"UPDATE {table} SET outcome = %s WHERE id = %s",
                        ['{"action": "REDEEMED"}', message.pk])

    assert REFUSED in error
    message.refresh_from_db()
    assert message.outcome == {"action": "NO_COUPON"}


def test_only_a_redemptions_succeeded_flag_moves(history):
    """RETURN and REVERSE undo a redemption by this flag; nothing else about it changes."""
    redemption = Redemption.objects.get(coupon=history)

    with transaction.atomic():
        assert declared_moves(Redemption.objects.filter(pk=redemption.pk), {"succeeded": False},
                              step="returned", actor="test") == 1
        transaction.set_rollback(True)  # the coupon is still USED: keep its evidence whole
    error = refused_raw("UPDATE coupons_redemption SET discount_amount = 0 WHERE id = %s",
                        [redemption.pk])

    assert REFUSED in error
    redemption.refresh_from_db()
    assert redemption.succeeded is True


# --- the journal names an edit that got past the triggers ---------------------------------


def test_an_edited_ledger_row_is_named_by_its_journal(history, tamper):
    redeem = ledger(history)[2]
    tamper(redeem, actor="intruder")

    report = coupon_check(history)

    assert not report.ok
    assert report.violations == {
        9: [f'coupon operation {redeem.pk}: actor is "intruder", its journal says "test"'],
    }


def test_the_check_api_shows_the_edited_row(history, tamper, api):
    redeem = ledger(history)[2]
    tamper(redeem, payment_id="P-forged")

    body = api.get(f"/api/v1/coupons/{history.pk}/check").json()

    assert body["ok"] is False
    journal = next(item for item in body["invariants"] if item["number"] == 9)
    assert journal["problems"] == [
        f'coupon operation {redeem.pk}: payment_id is "P-forged", its journal says "P-1"']


def test_an_edit_with_triggers_disabled_is_caught_by_the_journal(history):
    """The superuser path: ALTER TABLE ... DISABLE TRIGGER, then a raw UPDATE. The row is put
    back (triggers still off) before the after-test ledger check of tests/conftest.py."""
    redeem = ledger(history)[2]
    table = CouponOperation._meta.db_table
    # The test's own inserts left deferred foreign-key checks pending, which ALTER TABLE
    # refuses to run over: check them now.
    raw("SET CONSTRAINTS ALL IMMEDIATE", [])
    raw(f"ALTER TABLE {table} DISABLE TRIGGER USER", [])
    try:
        raw(f"UPDATE {table} SET actor = 'intruder' WHERE id = %s", [redeem.pk])
        problems = coupon_check(history).violations[9]
    finally:
        raw(f"UPDATE {table} SET actor = %s WHERE id = %s", [redeem.actor, redeem.pk])
        raw(f"ALTER TABLE {table} ENABLE TRIGGER USER", [])

    assert problems == [f'coupon operation {redeem.pk}: actor is "intruder", its journal says '
                        '"test"']
    assert coupon_check(history).ok


def test_commands_after_an_edit_go_on_and_the_edit_stays_visible(history, ctx, tamper):
    lock_row = ledger(history)[1]
    tamper(lock_row, actor="intruder")

    coupon_void(coupon_id=history.pk, expected_version=3, reason="risk", ctx=ctx)

    history.refresh_from_db()
    assert coupon_check(history, full=True).violations[9] == [
        f'coupon operation {lock_row.pk}: actor is "intruder", its journal says "test"']
