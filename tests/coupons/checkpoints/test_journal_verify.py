"""verify_ledger against the journal's Merkle log: every signed journal head, the consistency
between them, each leaf against its entry's content, and every journaled row's fold; and the
sequencer's stored subtree hashes that proofs are read from."""

import hashlib
import importlib

import pytest
from django.apps import apps
from django.db import DatabaseError, transaction

from coupons.evidence import merkle
from coupons.models import (
    ConflictCase,
    CouponOperation,
    JournalEntry,
    JournalLeaf,
    JournalNode,
    LedgerCheckpoint,
)
from coupons.services import coupon_issue
from operations.checkpoint import ledger_checkpoint
from tests.app_role import past_the_triggers
from tests.coupons.checkpoints.conftest import checkpoint_file, rewrite, verify
from tests.coupons.checkpoints.test_journal_log import open_cases, sequence

pytestmark = pytest.mark.django_db
# The redeemed coupon's own entries (its ledger rows, binding and redemption) and three cases
# more fill log positions 0..7, a complete subtree: the tests' entries start at 8, where the
# tree's shapes are those of a log starting at 0.
BEFORE = 8


def filled_to_before(coupon):
    open_cases(coupon, BEFORE - JournalEntry.objects.count(), start=100)
    assert JournalEntry.objects.count() == BEFORE
    return coupon


@pytest.fixture
def redeemed(redeemed):
    return filled_to_before(redeemed)


def two_checkpoints(coupon):
    """Checkpoint 1 signs log positions 0..10, checkpoint 2 positions 0..13: checkpoint 1's
    own entry at 11, two cases (and the proof from 11 to 14, whose nodes are positions 10, 11,
    12..13, 8..9 and 0..7)."""
    open_cases(coupon, 3)
    sequence()
    ledger_checkpoint()
    open_cases(coupon, 2, start=3)
    sequence()
    ledger_checkpoint()


def rewrite_consistently(index: int, old: str, new: str) -> JournalLeaf:
    """The owner, past the triggers, rewrites the entry at `index`, its hash and its leaf, so
    each matches the others."""
    leaf = JournalLeaf.objects.select_related("entry").get(index=index)
    forged = leaf.entry.content.replace(old, new)
    assert forged != leaf.entry.content
    with past_the_triggers():
        JournalEntry.objects.filter(pk=leaf.entry_id).update(
            content=forged, content_hash=hashlib.sha256(forged.encode()).hexdigest())
        JournalLeaf.objects.filter(index=index).update(
            leaf_hash=hashlib.sha256(b"\0" + forged.encode()).hexdigest())
    return leaf


def test_a_journal_that_extends_every_signed_head_holds(redeemed, checkpoint_dir, public_key):
    two_checkpoints(redeemed)

    assert verify(checkpoint_file(checkpoint_dir, 2), "--public-key", public_key) == (
        0, "checkpoint 2 holds: 2 signed checkpoints and 14 journal log positions "
           "checked\n")
    # A directory of files: the same chain.
    assert verify(checkpoint_dir, "--public-key", public_key)[0] == 0


def test_an_entry_rewritten_below_a_signed_size_is_named_with_its_coupon(
        redeemed, checkpoint_dir, public_key, broken_on_purpose):
    two_checkpoints(redeemed)
    leaf = rewrite_consistently(BEFORE + 2, '"n":2', '"n":9')
    case = ConflictCase.objects.get(pk=leaf.entry.subject_id)
    broken_on_purpose.add(redeemed.pk)

    status, out = verify(checkpoint_file(checkpoint_dir, 2), "--public-key", public_key)

    assert status == 1
    assert (f"BROKEN coupon {redeemed.pk}: journal log position 10 (entry {leaf.entry_id}, "
            f"coupons.conflictcase {case.pk}): its entry is not the one checkpoint 1 signed "
            "there") in out
    assert "BROKEN: the log's first 14 leaves do not make the journal root checkpoint 2 " \
           "signed" in out
    # No other position is named: the signer's leaves files pin it down.
    assert out.count("journal log position") == 1
    # The row no longer equals its entries either.
    assert f"BROKEN coupon {redeemed.pk}: coupons.conflictcase {case.pk}: evidence is" in out
    assert out.endswith(f"broken coupons: {redeemed.pk}\n")


def test_without_the_leaves_files_a_rewrite_is_named_among_its_range(
        redeemed, checkpoint_dir, public_key, broken_on_purpose, tmp_path):
    """A checkpoint file copied alone (an outbox event saved as a file): the signed proof's
    nodes are all there is to narrow the rewrite down."""
    two_checkpoints(redeemed)
    leaf = rewrite_consistently(BEFORE + 1, '"n":1', '"n":9')
    broken_on_purpose.add(redeemed.pk)
    alone = tmp_path / "alone.json"
    alone.write_text(checkpoint_file(checkpoint_dir, 2).read_text())

    status, out = verify(alone, "--public-key", public_key)

    assert status == 1
    # Positions 8..9 are one node of the signed proof: the rewrite is one of those two.
    assert (f"journal log position 9 (entry {leaf.entry_id}, coupons.conflictcase "
            f"{leaf.entry.subject_id}): one of log positions 8..9 was rewritten or removed after "
            f"checkpoint 2 signed them") in out
    assert out.count("journal log position") == 2


def test_an_entry_deleted_below_a_signed_size_is_named(
        redeemed, checkpoint_dir, public_key, broken_on_purpose):
    open_cases(redeemed, 3)
    sequence()
    ledger_checkpoint()
    leaf = JournalLeaf.objects.select_related("entry").get(index=BEFORE + 1)
    with past_the_triggers():
        JournalLeaf.objects.filter(index=BEFORE + 1).delete()
        JournalEntry.objects.filter(pk=leaf.entry_id).delete()
    broken_on_purpose.add(redeemed.pk)

    status, out = verify(checkpoint_file(checkpoint_dir, 1), "--public-key", public_key)

    assert status == 1
    assert "BROKEN: journal log position 9 is missing: no leaf holds it" in out
    assert (f"BROKEN coupon {redeemed.pk}: coupons.conflictcase {leaf.entry.subject_id}: has "
            f"no journal entry") in out


def test_a_log_cut_below_a_signed_size_is_named(redeemed, checkpoint_dir, public_key):
    """The newest position removed, its entry kept: the rows still fold, the signed head
    does not."""
    open_cases(redeemed, 3)
    sequence()
    ledger_checkpoint()
    with past_the_triggers():
        JournalLeaf.objects.filter(index=BEFORE + 2).delete()

    status, out = verify(checkpoint_file(checkpoint_dir, 1), "--public-key", public_key)

    assert status == 1
    assert ("BROKEN: checkpoint 1 signed a journal log of 11 positions; the log holds 10: "
            "positions 10..10 are gone") in out


def test_a_checkpoint_off_the_chain_is_reported_as_a_fork(
        redeemed, checkpoint_dir, public_key, tmp_path, settings, monkeypatch):
    open_cases(redeemed, 2)
    sequence()
    ledger_checkpoint()
    first = checkpoint_file(checkpoint_dir, 1).read_text()
    # A second signer's directory, same key: another checkpoint 1 (another time), signed by
    # whoever holds the key with a signer of their own, which does not fold the rows it signs
    # (the honest one would refuse: the checkpoint rows deleted below have entries).
    settings.LEDGER_CHECKPOINT_DIR = str(tmp_path / "other")
    monkeypatch.setattr("operations.checkpoint.unfolded_rows", lambda since: [])
    with past_the_triggers():
        LedgerCheckpoint.objects.all().delete()
    open_cases(redeemed, 1, start=2)
    sequence()
    ledger_checkpoint()
    (tmp_path / "other" / "checkpoint-00000001.json").rename(tmp_path / "fork.json")
    (tmp_path / "mine.json").write_text(first)

    status, out = verify(tmp_path / "mine.json", "--checkpoint", tmp_path / "fork.json",
                         "--public-key", public_key)

    assert status == 1
    assert "BROKEN: two different signed checkpoints are numbered 1: the log forked" in out


def test_the_sequencer_stores_every_complete_subtree_once(redeemed):
    open_cases(redeemed, 5)
    sequence()
    open_cases(redeemed, 6, start=5)
    sequence()

    leaves = [bytes.fromhex(h) for h in
              JournalLeaf.objects.order_by("index").values_list("leaf_hash", flat=True)]
    levels = merkle.Levels(leaves)
    stored = {(level, position): bytes.fromhex(node) for level, position, node in
              JournalNode.objects.values_list("level", "position", "hash")}
    assert len(leaves) == BEFORE + 11
    assert stored == {(level, position): node for level, nodes in enumerate(levels.levels)
                      if level for position, node in enumerate(nodes)}
    # 19 leaves: 9 pairs, 4 subtrees of four, 2 of eight, 1 of sixteen.
    assert sorted(stored) == [*((1, n) for n in range(9)), *((2, n) for n in range(4)),
                              (3, 0), (3, 1), (4, 0)]


def test_the_app_role_cannot_write_a_subtree_hash(redeemed):
    with pytest.raises(DatabaseError, match="permission denied"), transaction.atomic():
        JournalNode.objects.create(level=1, position=0, hash="0" * 64)


def test_the_migration_stores_the_subtrees_of_positions_given_before_it(redeemed):
    """Positions the sequencer gave before it stored subtrees get theirs from the migration."""
    open_cases(redeemed, 6)
    sequence()
    stored = set(JournalNode.objects.values_list("level", "position", "hash"))
    with past_the_triggers():
        JournalNode.objects.all().delete()
    migration = importlib.import_module("coupons.migrations.0025_journal_nodes")

    with past_the_triggers():
        migration.nodes_of_the_leaves_already_there(apps, None)

    assert set(JournalNode.objects.values_list("level", "position", "hash")) == stored
    assert len(stored) == 11  # 14 leaves: (1, 0..6), (2, 0..2), (3, 0)


def test_a_rewrite_in_a_long_log_is_named_exactly_and_nothing_innocent_with_it(
        redeemed, checkpoint_dir, public_key, template, ctx):
    """A row and its entry rewritten to agree (the owner, triggers off) after a checkpoint
    covered them, in a log of 300 positions, where the signed ranges span up to 256: the
    signer's leaves files name that one position, its entry and its coupon, no other."""
    for n in range(20):
        coupon = coupon_issue(template_id=template.pk, user_id=f"innocent-{n}", ctx=ctx).coupon
        open_cases(coupon, 14, start=1000)
    sequence()
    ledger_checkpoint()
    victim = CouponOperation.objects.get(coupon=redeemed, to_version=2)
    rewrite(redeemed, 2, actor="attacker")
    entry = JournalEntry.objects.get(subject="coupons.couponoperation", subject_id=victim.pk)

    status, out = verify(checkpoint_dir, "--public-key", public_key)

    assert status == 1
    assert JournalLeaf.objects.count() > 256
    position = JournalLeaf.objects.get(entry=entry).index
    assert out.count("journal log position") == 2, out  # its leaf, and the signed one
    assert (f"BROKEN coupon {redeemed.pk}: journal log position {position} (entry {entry.pk}, "
            f"coupons.couponoperation {victim.pk}): its entry is not the one checkpoint 1 "
            "signed there") in out
    assert out.endswith(f"broken coupons: {redeemed.pk}\n")
