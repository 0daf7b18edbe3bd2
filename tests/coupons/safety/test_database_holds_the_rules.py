"""The database holds the rules the services keep (PostgreSQL): a stolen application login
sending raw SQL moves no column the services do not move (column grants) and moves those only
as the services do (triggers); the owner's login, triggers on, is held by the same triggers.

Every test runs as coupon_app unless it says otherwise; each refused write runs in a savepoint
and the row is read afterwards, unchanged.
"""

from decimal import Decimal

import pytest
from django.db import DatabaseError, connection, transaction

from coupons.evidence.tips import journal_tip
from coupons.models import CaseStatus, CouponStatus, FactType, Finding, UserCoupon
from coupons.models import OperationType as Op
from coupons.services import coupon_redeem, coupon_void
from coupons.services.cases import case_open, case_resolve
from coupons.write import transitions
from coupons.write.declared import declared_insert
from operations.db_roles import APP_ROLE, UPDATABLE_COLUMNS
from refunds.models import Compensation, RefundCoupon
from refunds.services.compensation_decide import compensation_reject
from refunds.services.compensation_record import compensation_record
from refunds.services.refund_review import refund_approve
from tests.app_role import as_owner
from tests.conftest import lock
from tests.refunds.conftest import redeem, refund

pytestmark = pytest.mark.django_db

PERMISSION = "permission denied"
FROZEN = "pgtrigger: Cannot update"
FORWARD = "status moves only one step forward"
VERSION = "moves with its state_version up by one"


def execute(sql: str, params=()):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall() if cursor.description else None


def refused(sql: str, params=()) -> str:
    with pytest.raises(DatabaseError) as caught, transaction.atomic():
        execute(sql, params)
    return str(caught.value)


def row(model, pk) -> dict:
    return model.objects.filter(pk=pk).values().get()


def updatable_columns(table: str) -> set[str]:
    return {name for (name,) in execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0"
        " AND NOT attisdropped AND has_column_privilege(%s, attrelid, attnum, 'UPDATE')",
        [table, APP_ROLE])}


def installed_pairs() -> set[tuple[str, str]]:
    return set(execute("SELECT from_status, to_status FROM coupons_state_moves()"))


# --- column grants ---------------------------------------------------------------------------

@pytest.mark.parametrize("table", ["coupons_usercoupon", "coupons_couponlock",
                                   "coupons_conflictcase",
                                   "coupons_finding", "refunds_compensation",
                                   "refunds_refundcoupon", "coupons_goodwillproposal"])
def test_the_app_role_may_update_only_the_columns_the_services_move(table):
    assert not execute("SELECT has_table_privilege(%s, %s, 'UPDATE')", [APP_ROLE, table])[0][0]
    assert updatable_columns(table) == set(UPDATABLE_COLUMNS[table])


def test_what_was_received_proposed_or_opened_is_never_updatable():
    never = {
        "refunds_refundcoupon": {"refund_id", "order_id", "payment_id", "coupon_id",
                                 "refund_type", "risk_flag", "refund_amount", "created_by",
                                 "received_at"},
        "refunds_compensation": {"kind", "amount", "created_by", "order_id", "coupon_id",
                                 "operation_id", "reason", "created_at"},
        # A final payment joins its case (summary, evidence, recommendation): the journal's
        # step rules hold those to the join (tests/coupons/safety/test_database_journal.py).
        "coupons_conflictcase": {"coupon_id", "order_id", "opened_at"},
        "coupons_finding": {"kind", "coupon_id", "subject", "first_seen_at"},
        "coupons_usercoupon": {"user_id", "template_id", "template_version_id", "valid_from",
                               "valid_until", "issued_at"},
        "coupons_couponlock": {"coupon_id", "order_id", "token_hash", "token_key_id",
                               "acquired_version", "locked_at"},
        "coupons_goodwillproposal": {"user_id", "template_id", "coupon_id", "answers", "reason",
                                     "created_by", "created_at"},
    }
    for table, columns in never.items():
        assert not updatable_columns(table) & columns, table


# --- refund decisions ------------------------------------------------------------------------

@pytest.fixture
def pending(coupon, ctx):
    """A risk-flagged refund: MANUAL_REVIEW, waiting for an operator."""
    redeem(coupon, ctx)
    [decision] = refund(ctx, "r-1", risk_flag=True).decisions
    assert (decision.action, decision.status) == ("MANUAL_REVIEW", "PENDING_APPROVAL")
    return decision


@pytest.mark.parametrize("assignment", [
    "action = 'RETURN'", "facts = '{\"risk_flag\": false}'", "rule_label = 'Every refund'",
    "requires_approval = false",
])
def test_a_pending_recommendation_cannot_be_rewritten(pending, assignment):
    """The columns the decide step writes (granted: refund_decide moves them out of
    AWAITING_REDEMPTION) are frozen while the decision waits for its approval."""
    before = row(RefundCoupon, pending.pk)
    sql = f"UPDATE refunds_refundcoupon SET {assignment} WHERE id = %s"  # noqa: S608

    assert FROZEN in refused(sql, [pending.pk])
    with as_owner():
        assert FROZEN in refused(sql, [pending.pk])

    assert row(RefundCoupon, pending.pk) == before


@pytest.mark.parametrize("assignment", [
    "refund_amount = 1", "created_by = 'user:someone-else'", "risk_flag = false",
    "refund_id = 'r-forged'",
])
def test_what_the_refund_service_sent_cannot_be_rewritten(pending, assignment):
    before = row(RefundCoupon, pending.pk)

    assert PERMISSION in refused(
        f"UPDATE refunds_refundcoupon SET {assignment} WHERE id = %s", [pending.pk])  # noqa: S608

    assert row(RefundCoupon, pending.pk) == before


def test_a_pending_decision_cannot_go_back_to_be_decided_again(pending):
    before = row(RefundCoupon, pending.pk)
    sql = "UPDATE refunds_refundcoupon SET status = 'AWAITING_REDEMPTION' WHERE id = %s"

    assert FORWARD in refused(sql, [pending.pk])
    with as_owner():
        assert FORWARD in refused(sql, [pending.pk])

    assert row(RefundCoupon, pending.pk) == before


def test_a_decided_decision_s_status_never_changes_again(pending, ctx):
    refund_approve(decision_id=pending.pk, note="checked", action="KEEP_USED", ctx=ctx,
                   seen_entry=journal_tip(RefundCoupon, pending.pk))
    before = row(RefundCoupon, pending.pk)
    assert before["status"] == "DECIDED"

    for status in ("PENDING_APPROVAL", "REJECTED", "EXECUTED"):
        sql = f"UPDATE refunds_refundcoupon SET status = '{status}' WHERE id = %s"  # noqa: S608
        assert FROZEN in refused(sql, [pending.pk])
        with as_owner():  # the second way in: the owner's login, triggers on
            assert FROZEN in refused(sql, [pending.pk])

    assert row(RefundCoupon, pending.pk) == before


def test_the_approval_still_moves_what_it_moves(pending, ctx):
    decision = refund_approve(decision_id=pending.pk, note="checked", action="RETURN", ctx=ctx,
                              seen_entry=journal_tip(RefundCoupon, pending.pk))

    assert (decision.status, decision.executed_action) == ("EXECUTED", "RETURN")
    assert row(RefundCoupon, pending.pk)["reviewed_by"] == ctx.actor


def test_a_decision_cannot_be_inserted_already_decided(coupon, clock):
    with pytest.raises(DatabaseError, match="rows open only in their first status"), \
            transaction.atomic():
        RefundCoupon.objects.create(
            refund_id="r-forged", order_id="order-A", coupon=coupon, refund_type="FULL",
            refund_amount=Decimal("1.00"), status="EXECUTED", action="RETURN",
            created_by="user:attacker", received_at=clock.now())

    assert not RefundCoupon.objects.exists()


# --- compensations ---------------------------------------------------------------------------

@pytest.fixture
def proposed(coupon, ctx):
    return compensation_record(kind=Compensation.Kind.ORDER_DISCOUNT_REFUND, order_id="order-A",
                               coupon=coupon, amount=Decimal("30.00"), reason="owed",
                               actor="system:coupons")


@pytest.mark.parametrize("assignment", [
    "amount = 3000", "created_by = 'user:operator-2'", "kind = 'MONEY'",
])
def test_a_compensation_s_amount_kind_and_proposer_cannot_be_rewritten(proposed, assignment):
    before = row(Compensation, proposed.pk)

    assert PERMISSION in refused(
        f"UPDATE refunds_compensation SET {assignment} WHERE id = %s", [proposed.pk])  # noqa: S608

    assert row(Compensation, proposed.pk) == before


def test_a_decided_compensation_moves_no_more(proposed, ctx):
    compensation_reject(compensation_id=proposed.pk, note="not owed", ctx=ctx,
                        seen_entry=journal_tip(Compensation, proposed.pk))
    before = row(Compensation, proposed.pk)

    for status in ("PROPOSED", "APPROVED"):
        sql = f"UPDATE refunds_compensation SET status = '{status}' WHERE id = %s"  # noqa: S608
        assert FROZEN in refused(sql, [proposed.pk])
        with as_owner():
            assert FROZEN in refused(sql, [proposed.pk])

    assert row(Compensation, proposed.pk) == before


def test_a_compensation_moves_only_to_a_status_it_has(proposed):
    assert FORWARD in refused(
        "UPDATE refunds_compensation SET status = 'EXECUTED' WHERE id = %s", [proposed.pk])
    assert row(Compensation, proposed.pk)["status"] == "PROPOSED"


# --- conflict cases and findings ------------------------------------------------------------

@pytest.fixture
def case(coupon):
    return case_open(coupon=coupon, order_id="order-A", fact_type=FactType.PAYMENT_SUCCEEDED,
                     evidence={"payment_id": "P-1"})


def test_a_case_cannot_be_dismissed_with_a_rewritten_summary_or_evidence(case):
    """What a case was opened with has no grant (`opened_at`), or moves only when a final
    payment joins it: a dismissal that rewrites it is refused by the journal's step rules,
    whichever step the app's login declares."""
    before = row(type(case), case.pk)
    dismiss = ("UPDATE coupons_conflictcase SET status = 'DISMISSED', resolved_by = 'user:other',"
               " resolution = 'DISMISSED', {} WHERE id = %s")

    assert PERMISSION in refused(dismiss.format("opened_at = now()"), [case.pk])
    for other in ("summary = 'nothing happened'", "evidence = '{}'"):
        for step in ("dismissed", "joined"):
            with pytest.raises(DatabaseError, match="journal: "), transaction.atomic():
                execute("SELECT set_config('coupons.actor', 'user:other', true), "
                        "set_config('coupons.step.coupons_conflictcase', %s, true)", [step])
                execute(dismiss.format(other), [case.pk])

    assert row(type(case), case.pk) == before


def test_a_closed_case_never_opens_again(case, ctx):
    case_resolve(case_id=case.pk, action="DISMISS", note="a duplicate", ctx=ctx)
    before = row(type(case), case.pk)
    sql = "UPDATE coupons_conflictcase SET status = 'OPEN' WHERE id = %s"

    assert FROZEN in refused(sql, [case.pk])
    with as_owner():
        assert FROZEN in refused(sql, [case.pk])

    assert row(type(case), case.pk) == before


def test_a_case_moves_only_to_a_status_it_has(case):
    assert FORWARD in refused(
        "UPDATE coupons_conflictcase SET status = 'APPROVED' WHERE id = %s", [case.pk])
    assert row(type(case), case.pk)["status"] == CaseStatus.OPEN


def test_a_finding_opens_only_open_and_its_fault_is_never_rewritten(coupon, clock):
    def finding(status):
        return Finding(kind="LEDGER_GAP", severity="P0", coupon=coupon, summary="gap",
                       repair="MANUAL_REVIEW", status=status, first_seen_at=clock.now(),
                       last_seen_at=clock.now())

    with pytest.raises(DatabaseError, match="rows open only in their first status"), \
            transaction.atomic():
        declared_insert(finding("RESOLVED"), kind="opened", actor="test")
    found = declared_insert(finding("OPEN"), kind="opened", actor="test")

    assert PERMISSION in refused(
        "UPDATE coupons_finding SET kind = 'GHOST_REDEMPTION' WHERE id = %s", [found.pk])
    assert FORWARD in refused(
        "UPDATE coupons_finding SET status = 'DISMISSED' WHERE id = %s", [found.pk])
    assert row(Finding, found.pk)["status"] == "OPEN"


# --- the coupon's state machine ---------------------------------------------------------------

@pytest.fixture
def used(coupon, ctx):
    _, proof = lock(coupon, ctx)
    coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id="P-1", ctx=ctx)
    coupon.refresh_from_db()
    assert (coupon.status, coupon.state_version) == (CouponStatus.USED, 3)
    return coupon


@pytest.mark.parametrize(("assignment", "refusal"), [
    # No operation takes a used coupon back to a lease.
    ("status = 'LOCKED', state_version = 4, current_lock_id = (SELECT l.id FROM"
     " coupons_couponlock l WHERE l.coupon_id = coupons_usercoupon.id),"
     " locked_order_id = 'order-X', lock_token_hash = repeat('0', 64)",
     "no operation moves a coupon from USED to LOCKED"),
    ("status = 'VOID', state_version = 5", VERSION),  # an allowed move, two versions up
    ("status = 'VOID'", VERSION),  # an allowed move, the version unchanged
    ("state_version = 2", VERSION),  # the version back
])
def test_a_coupon_moves_only_along_the_table_one_version_at_a_time(used, assignment, refusal):
    before = row(UserCoupon, used.pk)
    sql = f"UPDATE coupons_usercoupon SET {assignment} WHERE id = %s"  # noqa: S608

    assert refusal in refused(sql, [used.pk])
    with as_owner():
        assert refusal in refused(sql, [used.pk])

    assert row(UserCoupon, used.pk) == before


def test_a_lease_is_not_extended_without_a_version(coupon, ctx):
    lock(coupon, ctx)
    before = row(UserCoupon, coupon.pk)

    assert VERSION in refused(
        "UPDATE coupons_usercoupon SET lock_expires_at = lock_expires_at + interval '30 days'"
        " WHERE id = %s", [coupon.pk])

    assert row(UserCoupon, coupon.pk) == before


def test_a_coupon_s_owner_and_validity_are_not_the_app_s_to_move(coupon):
    for assignment in ("user_id = 'u-attacker'", "valid_until = '2100-01-01'"):
        assert PERMISSION in refused(
            f"UPDATE coupons_usercoupon SET {assignment} WHERE id = %s",  # noqa: S608
            [coupon.pk])


def test_the_services_still_move_the_coupon(used, ctx):
    """One version up along the table: the void of a used coupon passes the trigger."""
    coupon_void(coupon_id=used.pk, expected_version=3, reason="fraud", ctx=ctx)

    assert UserCoupon.objects.values_list("status", "state_version").get(pk=used.pk) == (
        "VOID", 4)


# --- one source: the database's pairs are the Python table's -------------------------------

def test_the_database_holds_the_python_transition_table():
    assert installed_pairs() == transitions.state_moves(), (
        "coupons/write/transitions.py and coupons_state_moves() differ: write a migration "
        "that replaces the function with sorted(state_moves()) (see coupons/0039)")


def test_a_pair_added_to_the_python_table_alone_makes_them_differ(monkeypatch):
    changed = {**transitions.TRANSITIONS, Op.LOCK: {CouponStatus.AVAILABLE: {
        CouponStatus.LOCKED}, CouponStatus.EXPIRED: {CouponStatus.LOCKED}}}
    monkeypatch.setattr(transitions, "TRANSITIONS", changed)

    assert installed_pairs() != transitions.state_moves()
    assert transitions.state_moves() - installed_pairs() == {("EXPIRED", "LOCKED")}


@pytest.mark.owner_role
def test_a_pair_dropped_from_the_database_alone_makes_them_differ_and_is_enforced(coupon, ctx):
    """In a transaction rolled back: the owner replaces the function without AVAILABLE →
    LOCKED. The comparison fails, and the lock itself is refused: the trigger reads the
    function, not a copy."""
    with pytest.raises(DatabaseError, match="no operation moves a coupon from AVAILABLE to"), \
            transaction.atomic():
        pairs = ", ".join(f"('{old}', '{new}')" for old, new in
                          sorted(transitions.state_moves()) if (old, new) != ("AVAILABLE",
                                                                              "LOCKED"))
        execute("CREATE OR REPLACE FUNCTION coupons_state_moves() RETURNS TABLE"
                " (from_status text, to_status text) LANGUAGE sql IMMUTABLE"
                f" SET search_path = pg_catalog, public AS $$ VALUES {pairs} $$")
        assert transitions.state_moves() - installed_pairs() == {("AVAILABLE", "LOCKED")}
        lock(coupon, ctx)

    assert installed_pairs() == transitions.state_moves()
    assert UserCoupon.objects.get(pk=coupon.pk).status == CouponStatus.AVAILABLE


def test_the_app_role_cannot_replace_the_pairs():
    assert PERMISSION in refused(
        "CREATE OR REPLACE FUNCTION coupons_state_moves() RETURNS TABLE"
        " (from_status text, to_status text) LANGUAGE sql AS $$ VALUES ('USED', 'LOCKED') $$")
