"""The journal's Merkle log: the sequencer gives positions, the signer signs the log's head and
refuses a log that does not extend the one it signed (an RFC 9162 consistency proof)."""

import hashlib
import io
import json

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction

from coupons import clock
from coupons.evidence import merkle
from coupons.evidence.journal import journal_problems
from coupons.models import JournalEntry, JournalLeaf, LedgerCheckpoint
from coupons.services.cases import case_open
from operations.checkpoint import ledger_checkpoint
from tests.app_role import past_the_triggers
from tests.coupons.checkpoints.conftest import checkpoint_file

pytestmark = pytest.mark.django_db


def open_cases(coupon, count, start=0):
    for n in range(start, start + count):
        case_open(coupon=coupon, order_id=f"order-{n}", fact_type="PaymentSucceeded",
                  evidence={"n": n})


def sequence() -> str:
    out = io.StringIO()
    call_command("sequence_journal", stdout=out)
    return out.getvalue()


def log_root() -> str:
    leaves = [merkle.leaf_hash(content.encode()) for content in
              JournalLeaf.objects.order_by("index").values_list("entry__content", flat=True)]
    return merkle.root_of_nodes(leaves).hex()


@pytest.fixture
def prior(redeemed) -> int:
    """The redeemed coupon's own entries (ledger rows, binding, redemption), sequenced first:
    the positions the tests' cases take start after them."""
    sequence()
    return JournalLeaf.objects.count()


def signed(number: int, directory) -> dict:
    return json.loads(json.loads(checkpoint_file(directory, number).read_text())["signed"])


def test_the_sequencer_gives_consecutive_positions_in_entry_order_once(redeemed, prior):
    open_cases(redeemed, 3)

    assert sequence().startswith("3 journal entries sequenced")
    assert sequence().startswith("0 journal entries sequenced")
    leaves = list(JournalLeaf.objects.order_by("index").select_related("entry"))
    assert prior == 5
    assert [leaf.index for leaf in leaves] == [0, 1, 2, 3, 4, 5, 6, 7]
    assert [leaf.entry_id for leaf in leaves] == sorted(leaf.entry_id for leaf in leaves)
    assert all(leaf.leaf_hash == hashlib.sha256(b"\0" + leaf.entry.content.encode()).hexdigest()
               for leaf in leaves)


def test_an_entry_that_commits_late_never_gets_a_position_below_one_already_given(
        redeemed, prior):
    open_cases(redeemed, 2)
    sequence()
    first = JournalEntry.objects.order_by("id").first()
    case = case_open(coupon=redeemed, order_id="order-late", fact_type="PaymentSucceeded",
                     evidence={})
    late = JournalEntry.objects.get(subject_id=case.pk, subject="coupons.conflictcase")
    # The same entry as if its transaction had taken a lower id and committed after the run.
    with past_the_triggers():
        JournalEntry.objects.filter(pk=late.pk).update(id=first.pk - 1)

    sequence()

    assert JournalLeaf.objects.get(entry_id=first.pk - 1).index == prior + 2


def test_the_app_role_cannot_write_a_position_itself(redeemed, prior):
    open_cases(redeemed, 1)
    entry = JournalEntry.objects.get(subject="coupons.conflictcase")

    with pytest.raises(DatabaseError, match="permission denied"), transaction.atomic():
        JournalLeaf.objects.create(index=prior, entry=entry, leaf_hash="0" * 64,
                                   sequenced_at=clock.now())


def test_a_checkpoint_signs_the_journal_log_and_the_next_one_extends_it(
        redeemed, prior, checkpoint_dir):
    open_cases(redeemed, 3)
    sequence()
    ledger_checkpoint()
    open_cases(redeemed, 2, start=3)
    sequence()
    ledger_checkpoint()

    first, second = signed(1, checkpoint_dir), signed(2, checkpoint_dir)
    # The second covers the first checkpoint's own entry (sequenced with the two cases).
    assert (first["journal_size"], second["journal_size"]) == (prior + 3, prior + 6)
    assert second["journal_root"] == log_root()
    nodes = [merkle.leaf_hash(content.encode()) for content in
             JournalLeaf.objects.order_by("index").values_list("entry__content", flat=True)]
    assert merkle.consistency_holds(prior + 3, prior + 6,
                                    merkle.consistency_proof(prior + 3, nodes),
                                    bytes.fromhex(first["journal_root"]),
                                    bytes.fromhex(second["journal_root"]))


def test_an_entry_rewritten_below_the_signed_size_is_a_finding_and_the_chain_goes_on(
        redeemed, prior, checkpoint_dir, broken_on_purpose):
    """The owner rewrites an entry, its hash and its leaf consistently, behind the triggers:
    the signer names the position and signs its own signed log extended, not the rewrite."""
    open_cases(redeemed, 3)
    sequence()
    ledger_checkpoint()
    leaf = JournalLeaf.objects.select_related("entry").get(index=prior + 1)
    forged = leaf.entry.content.replace('"n":1', '"n":9')
    with past_the_triggers():
        JournalEntry.objects.filter(pk=leaf.entry_id).update(
            content=forged, content_hash=hashlib.sha256(forged.encode()).hexdigest())
        JournalLeaf.objects.filter(index=prior + 1).update(
            leaf_hash=hashlib.sha256(b"\0" + forged.encode()).hexdigest())
    broken_on_purpose.add(redeemed.pk)

    run = ledger_checkpoint()

    assert [finding for finding in run.findings if "log position" in finding] == [
        f"journal log position {prior + 1} (entry {leaf.entry_id}, coupons.conflictcase "
        f"{leaf.entry.subject_id} of coupon {redeemed.pk}): its entry is not the one the "
        "signer signed there (rewritten or removed after it was signed)"]
    first, second = signed(1, checkpoint_dir), signed(2, checkpoint_dir)
    assert merkle.consistency_holds(
        first["journal_size"], second["journal_size"],
        [bytes.fromhex(node) for node in second["journal_consistency"]],
        bytes.fromhex(first["journal_root"]), bytes.fromhex(second["journal_root"]))
    assert second["journal_root"] != log_root()  # the rewrite is not what it signed


def test_an_entry_changed_under_its_position_is_signed_as_logged_and_named(
        redeemed, prior, checkpoint_dir, broken_on_purpose):
    open_cases(redeemed, 2)
    sequence()
    entry = JournalLeaf.objects.get(index=prior).entry
    with past_the_triggers(), connection.cursor() as cursor:
        cursor.execute("UPDATE coupons_journalentry SET content = replace(content, "
                       "'\"n\":0', '\"n\":7') WHERE id = %s", [entry.pk])
    broken_on_purpose.add(redeemed.pk)

    run = ledger_checkpoint()

    assert f"journal log position {prior} (entry {entry.pk}, coupons.conflictcase " \
           f"{entry.subject_id} of coupon {redeemed.pk}): its entry's content is not what the " \
           "sequencer logged (signed as logged)" in run.findings
    assert signed(1, checkpoint_dir)["journal_size"] == prior + 2


def test_each_checkpoint_is_a_journal_entry_the_next_head_covers(redeemed, prior,
                                                                 checkpoint_dir):
    open_cases(redeemed, 1)
    sequence()
    first = ledger_checkpoint().checkpoint
    sequence()
    ledger_checkpoint()

    [entry] = JournalEntry.objects.filter(subject="coupons.ledgercheckpoint", subject_id=first.pk)
    content = json.loads(entry.content)
    assert (entry.kind, entry.actor) == ("signed", "system:ledger_checkpoint")
    assert content["row"] == {"number": 1, "body": first.body, "signature": first.signature,
                              "key_id": first.key_id,
                              "signed_at": first.signed_at.isoformat(timespec="microseconds")}
    assert json.loads(first.body)["journal_size"] == prior + 1
    # The second head signs the first checkpoint's entry, at the position after it.
    assert entry.leaf.index == prior + 1 < signed(2, checkpoint_dir)["journal_size"]
    assert not list(journal_problems())


def test_a_checkpoint_row_inserted_past_the_signer_is_named_by_the_journal(redeemed):
    """Any login may INSERT a checkpoint row (the signature is what is believed), journaled by
    the database as its own; one written past the triggers has no journal entry."""
    with past_the_triggers():
        forged = LedgerCheckpoint.objects.create(
            number=7, signed_at=clock.now(), key_id="k", body="{}", signature="AAAA")

    assert list(journal_problems()) == [
        ("coupons.ledgercheckpoint", forged.pk, "has no journal entry")]


def test_a_checkpoint_row_inserted_by_the_app_login_is_journaled_under_its_writer(redeemed):
    """The signer believes only its files; the database journals a row any login inserts
    under the actor that login declared, never as the signer's."""
    forged = LedgerCheckpoint.objects.create(
        number=7, signed_at=clock.now(), key_id="k", body="{}", signature="AAAA")

    [entry] = JournalEntry.objects.filter(subject="coupons.ledgercheckpoint", subject_id=forged.pk)
    assert entry.actor != "system:ledger_checkpoint"
    assert list(journal_problems()) == []
