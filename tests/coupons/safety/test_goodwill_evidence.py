"""Goodwill proposals are evidence from their first row, as compensations are: the application
login moves only the decision's columns (grants), moves them only one step forward and never
after a decision (triggers, the owner's login held too), deletes nothing, and every row is the
fold of the journal the database wrote for it (verify_journal names one edited past them).

Every test runs as coupon_app unless it says otherwise; each refused write runs in a savepoint
and the row is read afterwards, unchanged.
"""

from dataclasses import replace

import pytest
from django.db import DatabaseError, transaction

from coupons.errors import EvidenceMismatch
from coupons.evidence.tips import journal_tip
from coupons.models import GoodwillProposal
from coupons.services.goodwill import goodwill_approve, goodwill_propose, goodwill_reject
from coupons.write.declared import declared_moves
from operations.db_roles import UPDATABLE_COLUMNS
from tests.app_role import as_owner
from tests.coupons.safety.test_database_holds_the_rules import (
    FORWARD,
    FROZEN,
    PERMISSION,
    execute,
    refused,
    row,
    updatable_columns,
)
from tests.coupons.safety.test_db_roles import TRUNCATE_REFUSED
from tests.coupons.safety.test_evidence_journal import (
    edit_past_triggers,
    journal_of,
    verify_journal,
)

pytestmark = pytest.mark.django_db

TABLE = "coupons_goodwillproposal"


@pytest.fixture
def proposed(template, ctx):
    return goodwill_propose(template_id=template.pk, user_id="u9", answers="order-7",
                            reason="cold food", ctx=replace(ctx, actor="user:sam"))


def decide(proposal, ctx, actor="user:olga", approve=True):
    seen = journal_tip(GoodwillProposal, proposal.pk)
    if approve:
        return goodwill_approve(goodwill_id=proposal.pk, seen_entry=seen,
                                ctx=replace(ctx, actor=actor))
    return goodwill_reject(goodwill_id=proposal.pk, seen_entry=seen, note="no",
                           ctx=replace(ctx, actor=actor))


def test_the_app_role_may_update_only_the_decision_s_columns(db):
    assert not execute("SELECT has_table_privilege(current_user, %s, 'UPDATE')", [TABLE])[0][0]
    assert updatable_columns(TABLE) == set(UPDATABLE_COLUMNS[TABLE]) == {
        "status", "decided_by", "decided_at", "decision_note", "issued_coupon_id"}


@pytest.mark.parametrize("assignment", [
    "user_id = 'u-mallory'", "template_id = template_id + 1", "created_by = 'user:olga'",
    "answers = 'order-8'", "reason = 'rewritten'", "coupon_id = NULL",
])
def test_what_was_proposed_cannot_be_rewritten(proposed, assignment):
    before = row(GoodwillProposal, proposed.pk)

    assert PERMISSION in refused(
        f"UPDATE {TABLE} SET {assignment} WHERE id = %s", [proposed.pk])  # noqa: S608

    assert row(GoodwillProposal, proposed.pk) == before


@pytest.mark.parametrize("approve", [True, False], ids=["approved", "rejected"])
def test_a_decided_proposal_moves_no_more(proposed, ctx, approve):
    decide(proposed, ctx, approve=approve)
    before = row(GoodwillProposal, proposed.pk)

    moves = ["status = 'PROPOSED'", "decided_by = 'user:mallory'",
             "decided_at = decided_at - interval '1 day'", "decision_note = 'rewritten'"]
    if approve:
        moves.append("issued_coupon_id = NULL")
    for assignment in moves:
        sql = f"UPDATE {TABLE} SET {assignment} WHERE id = %s"  # noqa: S608
        assert FROZEN in refused(sql, [proposed.pk])
        with as_owner():
            assert FROZEN in refused(sql, [proposed.pk])

    assert row(GoodwillProposal, proposed.pk) == before


def test_a_proposal_opens_proposed_and_moves_only_to_a_status_it_has(proposed, template):
    assert FORWARD in refused(
        f"UPDATE {TABLE} SET status = 'ISSUED' WHERE id = %s", [proposed.pk])  # noqa: S608
    assert "open only in their first status" in refused(
        f"INSERT INTO {TABLE} (status, user_id, template_id, answers, reason, created_by, "  # noqa: S608
        "created_at, idempotency_key, request_hash, decided_by, decision_note) VALUES "
        "('APPROVED', 'u9', %s, 'order-9', 'x', 'user:sam', now(), '', '', '', '')",
        [template.pk])
    assert row(GoodwillProposal, proposed.pk)["status"] == "PROPOSED"


def test_a_proposal_is_never_deleted_nor_truncated(proposed):
    assert PERMISSION in refused(f"DELETE FROM {TABLE} WHERE id = %s", [proposed.pk])  # noqa: S608
    with as_owner():
        assert "Cannot delete" in refused(f"DELETE FROM {TABLE} WHERE id = %s",  # noqa: S608
                                          [proposed.pk])
    assert TABLE in TRUNCATE_REFUSED
    assert GoodwillProposal.objects.filter(pk=proposed.pk).exists()


def test_a_rejection_cannot_issue_a_coupon(proposed, coupon):
    """The journal's step rules: a `rejected` step moves no issued coupon, even through the
    granted columns."""
    with pytest.raises(DatabaseError), transaction.atomic():
        declared_moves(GoodwillProposal.objects.filter(pk=proposed.pk),
                       {"status": "REJECTED", "decided_by": "user:olga",
                        "issued_coupon_id": coupon.pk}, step="rejected", actor="user:olga")
    assert row(GoodwillProposal, proposed.pk)["status"] == "PROPOSED"


def test_every_write_is_a_journal_entry_and_the_journal_verifies(proposed, ctx):
    decide(proposed, ctx)

    assert [(e.kind, e.actor) for e in journal_of(proposed)] == [
        ("proposed", "user:sam"), ("approved", "user:olga")]
    assert verify_journal() == (
        "Every journal entry holds and every journaled row is its fold.\n", "")


def test_a_proposer_rewritten_past_the_triggers_is_named_and_never_decided(proposed, ctx):
    """The owner's login with the triggers off makes the approver the proposer on the row:
    the journal still names the first proposer, verify_journal names the row, and no decision
    is taken on it (so four eyes cannot be dodged by rewriting who proposed)."""
    edit_past_triggers(GoodwillProposal, proposed.pk, created_by="user:olga")

    out, failed = verify_journal()
    assert out == (f"coupons.goodwillproposal id={proposed.pk}: created_by is \"user:olga\", "
                   "its journal says \"user:sam\"\n")
    assert failed == "1 journal entries or rows fail."
    with pytest.raises(EvidenceMismatch):
        decide(proposed, ctx, actor="user:mallory")
    assert row(GoodwillProposal, proposed.pk)["status"] == "PROPOSED"
