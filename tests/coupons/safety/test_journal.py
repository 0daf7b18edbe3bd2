"""The journal: append-only in the database, its entries verifiable by anyone, every
journaled row held to their fold.

Each guard is shown firing on a broken case: the triggers and grants on an UPDATE or DELETE,
the grants on any INSERT by the app's login and the unique constraints on the owner's forged
second history, the fold on a forged step, `verify_journal` on an edited entry, a row without
entries and entries without a row, and a case closed by an UPDATE past the triggers refused at
its resolution. The database's own journal triggers: tests/coupons/safety/
test_database_journal.py.
"""

import hashlib
import io
import json
import uuid
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, IntegrityError, connection, transaction

from coupons import clock
from coupons.errors import EvidenceMismatch
from coupons.evidence.journal import content_text, fold_problem, row_facts, with_journal
from coupons.models import ConflictCase, JournalEntry, OrderCoupon
from coupons.services.cases import case_open, case_resolve
from refunds.models import Compensation
from refunds.services.compensation_record import compensation_record
from tests.app_role import as_owner, past_the_triggers
from tests.coupons.safety.breakage import redeemed

pytestmark = pytest.mark.django_db


@pytest.fixture
def case(template, ctx):
    coupon = redeemed(template, ctx)
    return case_open(coupon=coupon, order_id="order-late", fact_type="PaymentSucceeded",
                     evidence={"payment_id": "P-late"})


def raw(sql, *params):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def verify_journal() -> tuple[str, str]:
    out = io.StringIO()
    try:
        call_command("verify_journal", stdout=out)
    except CommandError as error:
        return out.getvalue(), str(error)
    return out.getvalue(), ""


def entries(row):
    return list(JournalEntry.objects.filter(subject=row._meta.label_lower, subject_id=row.pk)
                .order_by("id"))


def test_an_entry_is_canonical_json_whose_sha256_anyone_recomputes(case):
    [entry] = entries(case)
    content = json.loads(entry.content)

    assert entry.content_hash == hashlib.sha256(entry.content.encode()).hexdigest()
    assert entry.content == content_text(content.pop("id"), content)
    assert entry.content.startswith(f'{{"id":{case.pk},"actor":"system:coordinator",')
    assert content["row"]["status"] == "OPEN" and content["parent"] is None
    assert verify_journal() == (
        "Every journal entry holds and every journaled row is its fold.\n", "")


@pytest.mark.parametrize("sql", [
    "UPDATE coupons_journalentry SET content = '{}' WHERE id = %s",
    "DELETE FROM coupons_journalentry WHERE id = %s",
])
def test_the_app_role_can_neither_update_nor_delete_an_entry(case, sql):
    [entry] = entries(case)

    with pytest.raises(DatabaseError, match="permission denied"), transaction.atomic():
        raw(sql, entry.pk)


@pytest.mark.owner_role
@pytest.mark.parametrize("sql", [
    "UPDATE coupons_journalentry SET content = '{}' WHERE id = %s",
    "DELETE FROM coupons_journalentry WHERE id = %s",
    "TRUNCATE coupons_journalentry CASCADE",
])
def test_the_owner_cannot_either_while_the_triggers_are_on(case, sql):
    [entry] = entries(case)

    with pytest.raises(DatabaseError, match="pgtrigger: Cannot"), transaction.atomic():
        raw(sql, *([entry.pk] if "%s" in sql else []))


def test_a_second_history_for_a_row_is_refused_by_the_database(case):
    [entry] = entries(case)
    forged = dict(subject=entry.subject, subject_id=entry.subject_id, kind="opened",
                  actor="user:mallory", content=entry.content + " ", created_at=clock.now())

    # The app's login inserts no entry at all; the owner's second history is refused too.
    with pytest.raises(DatabaseError, match="permission denied"), transaction.atomic():
        JournalEntry.objects.create(parent_hash=None, content_hash="1" * 64, **forged)
    with as_owner(), pytest.raises(IntegrityError), transaction.atomic():  # a second first
        JournalEntry.objects.create(parent_hash=None, content_hash="1" * 64, **forged)
    with as_owner(), pytest.raises(IntegrityError), transaction.atomic():  # a fork
        JournalEntry.objects.create(parent_hash=entry.content_hash, content_hash="2" * 64,
                                    **forged)
        JournalEntry.objects.create(parent_hash=entry.content_hash, content_hash="3" * 64,
                                    **forged)


def test_a_forged_step_that_changes_what_was_proposed_does_not_fold(coupon, broken_on_purpose):
    """The owner may append an entry (the app's login may not); it cannot make one that moves
    a proposal's amount count as a step, so the row it then edits to match still fails."""
    owed = compensation_record(kind=Compensation.Kind.ORDER_DISCOUNT_REFUND, order_id="o-1",
                               coupon=coupon, amount="20.00", reason="owed", actor="test")
    [first] = entries(owed)
    body = {"actor": "user:mallory", "at": "2026-01-01T00:00:00.000000+00:00",
            "kind": "approved", "parent": first.content_hash, "row": {"amount": "2000.00"},
            "table": "refunds.compensation"}
    content = content_text(owed.pk, body)
    with past_the_triggers():
        JournalEntry.objects.create(
            subject="refunds.compensation", subject_id=owed.pk, kind="approved",
            actor="user:mallory", parent_hash=first.content_hash, content=content,
            content_hash=hashlib.sha256(content.encode()).hexdigest(), created_at=clock.now())
        raw("UPDATE refunds_compensation SET amount = 2000.00 WHERE id = %s", owed.pk)
    broken_on_purpose.add(coupon.pk)

    row = with_journal(Compensation.objects.filter(pk=owed.pk)).get()
    assert fold_problem(row) == "entry 2 sets amount, which no step may change"
    out, failed = verify_journal()
    assert f"refunds.compensation id={owed.pk}: entry 2 sets amount" in out
    assert failed == "1 journal entries or rows fail."


def test_an_open_case_closed_by_update_is_refused_at_its_resolution(case, ctx,
                                                                   broken_on_purpose):
    with past_the_triggers():  # the app's login: refused by the grant and the journal trigger
        raw("UPDATE coupons_conflictcase SET recommendation = 'COMPENSATING_REDEEM' "
            "WHERE id = %s", case.pk)
    broken_on_purpose.add(case.coupon_id)

    with pytest.raises(EvidenceMismatch) as refused:
        case_resolve(case_id=case.pk, action="APPLY", note="", ctx=ctx)

    assert refused.value.details["problem"] == (
        'recommendation is "COMPENSATING_REDEEM", its journal says "ORDER_DISCOUNT_REFUND"')
    assert ConflictCase.objects.get(pk=case.pk).status == "OPEN"


def test_an_honest_resolution_is_the_second_entry_of_the_case(case, ctx):
    case_resolve(case_id=case.pk, action="DISMISS", note="paid twice by the buyer", ctx=ctx)

    opened, dismissed = entries(case)
    assert (dismissed.kind, dismissed.actor, dismissed.parent_hash) == (
        "dismissed", "test", opened.content_hash)
    assert fold_problem(with_journal(ConflictCase.objects.filter(pk=case.pk)).get()) is None


def test_verify_journal_names_a_dismissal_by_update(case, broken_on_purpose):
    with past_the_triggers():
        raw("UPDATE coupons_conflictcase SET status = 'DISMISSED', resolved_by = 'user:op2', "
            "resolution_note = 'duplicate' WHERE id = %s", case.pk)
    broken_on_purpose.add(case.coupon_id)

    out, failed = verify_journal()

    assert out == (f'coupons.conflictcase id={case.pk}: status is "DISMISSED", its journal '
                   'says "OPEN"\n')
    assert failed == "1 journal entries or rows fail."


def test_verify_journal_names_an_entry_edited_past_the_triggers(case, broken_on_purpose):
    [entry] = entries(case)
    with past_the_triggers():
        JournalEntry.objects.filter(pk=entry.pk).update(
            content=entry.content.replace('"OPEN"', '"DISMISSED"'))
    broken_on_purpose.add(case.coupon_id)

    out, failed = verify_journal()

    assert f"journal entry id={entry.pk}: content_hash is not the SHA-256 of its content" in out
    assert failed


def test_verify_journal_names_rows_without_entries_and_entries_without_rows(
        case, coupon, broken_on_purpose):
    with past_the_triggers():
        unjournaled = ConflictCase.objects.create(
            coupon=coupon, order_id="o-2", fact_type="PaymentSucceeded",
            recommendation="MANUAL_REVIEW", summary="s", evidence={}, opened_at=clock.now())
    [entry] = entries(case)
    with as_owner():
        JournalEntry.objects.create(
            subject="coupons.conflictcase", subject_id=-1, kind="opened", actor="x",
            parent_hash=None, content=entry.content.replace(f'"id":{case.pk}', '"id":-1'),
            content_hash="4" * 64, created_at=clock.now())
    broken_on_purpose.add(coupon.pk)

    out, _failed = verify_journal()

    assert f"coupons.conflictcase id={unjournaled.pk}: has no journal entry" in out
    assert "coupons.conflictcase id=-1: has journal entries but no row" in out


def written_before_the_summary_codes(case) -> JournalEntry:
    """The case as one opened before its table had `summary_code` and `summary_params`: its
    first entry records neither, the row holds their defaults (past the triggers)."""
    [entry] = entries(case)
    content = json.loads(entry.content)
    del content["id"], content["row"]["summary_code"], content["row"]["summary_params"]
    text = content_text(case.pk, content)
    with past_the_triggers():
        JournalEntry.objects.filter(pk=entry.pk).update(
            content=text, content_hash=hashlib.sha256(text.encode()).hexdigest())
        ConflictCase.objects.filter(pk=case.pk).update(summary_code="", summary_params={})
    return JournalEntry.objects.get(pk=entry.pk)


def test_a_column_added_after_the_first_entry_folds_as_its_default(case):
    written_before_the_summary_codes(case)

    row = with_journal(ConflictCase.objects.filter(pk=case.pk)).get()

    assert fold_problem(row) is None
    assert row.summary_text == row.summary  # no code: the stored English sentence


def test_a_column_added_later_that_holds_more_than_its_default_is_named(
        case, broken_on_purpose):
    written_before_the_summary_codes(case)
    with past_the_triggers():
        ConflictCase.objects.filter(pk=case.pk).update(summary_code="free_again")
    broken_on_purpose.add(case.coupon_id)

    row = with_journal(ConflictCase.objects.filter(pk=case.pk)).get()

    assert fold_problem(row) == 'summary_code is "free_again", its journal says ""'


@pytest.mark.parametrize("amount", [Decimal("30"), 30, "30.5", None], ids=repr)
def test_an_entry_writes_each_column_as_its_json_value_whatever_the_python_type(amount):
    """A decimal column writes its places whether the row holds a Decimal, an int or a str;
    the other columns their JSON value, read from the row as it is."""
    at = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    row = OrderCoupon(lock_id=uuid.UUID(int=7), coupon_id=1, order_id="o-1", quote_id="",
                      order_amount=amount, discount_amount=Decimal("3.1"),
                      template_version_id=2, created_at=at)

    facts = row_facts(row)

    assert facts["order_amount"] == (None if amount is None else f"{Decimal(str(amount)):.2f}")
    assert facts["discount_amount"] == "3.10"
    assert facts["lock_id"] == str(uuid.UUID(int=7))
    assert facts["created_at"] == "2030-01-02T03:04:05.000000+00:00"
    assert (facts["coupon_id"], facts["order_id"], facts["quote_id"]) == (1, "o-1", "")
