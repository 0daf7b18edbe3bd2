"""Reads of the signed checkpoints: a coupon's proof, and what the coupon page says about it.
A proof reads the checkpoint row, the coupon's journal entries and the stored subtree hashes
its RFC 9162 paths are made of (O(log n) each, in one query), whatever the journal's length."""

import json
from datetime import datetime

from django.db import connection
from django.utils.translation import gettext_lazy as _

from coupons.errors import NotFound
from coupons.evidence import merkle
from coupons.evidence.checkpoint_keys import (
    checkpoint_document,
    key_id,
    signature_holds,
    verifying_key,
)
from coupons.evidence.journal import journaled_models
from coupons.models import (
    CouponOperation,
    JournalEntry,
    LedgerCheckpoint,
    UserCoupon,
)
from coupons.write.payloads import iso


def verified(checkpoint: LedgerCheckpoint, key) -> LedgerCheckpoint | None:
    """The row with its number and time as signed, or None when its signature does not hold
    under `key` or it stands under another number than it signed (a genuine checkpoint copied
    by any login under a higher number is not the newest)."""
    if not signature_holds(checkpoint.body, checkpoint.signature, key):
        return None
    body = json.loads(checkpoint.body)
    if body["number"] != checkpoint.number:
        return None
    checkpoint.number = body["number"]
    checkpoint.signed_at = datetime.fromisoformat(body["time"])
    return checkpoint


def latest_checkpoint() -> LedgerCheckpoint | None:
    """The newest checkpoint that verifies under the verifying key (checkpoint_keys). A row
    the signer did not sign (any login can INSERT one) is skipped, whatever number or date it
    claims: it never reaches a page or a proof."""
    key = verifying_key()
    if key is None:
        return None
    candidates = LedgerCheckpoint.objects.filter(key_id=key_id(key)).order_by("-number")
    for checkpoint in candidates.iterator(chunk_size=20):
        if (found := verified(checkpoint, key)) is not None:
            return found
    return None


def coupon_proof(*, coupon: UserCoupon, since: int | None = None) -> dict:
    """The coupon's ledger in brief and the latest checkpoint as signed; the coupon's journal
    entries (its ledger rows' included) with their RFC 9162 inclusion paths against its signed
    journal head, and with `since` the consistency proof from that older checkpoint's journal
    head: all scripts/auditors/verify_coupon_proof.py needs."""
    operations = [
        {"to_version": op.to_version, "op_type": op.op_type, "from_state": op.from_state,
         "to_state": op.to_state, "created_at": iso(op.created_at)}
        for op in CouponOperation.objects.filter(coupon=coupon).order_by("to_version")
    ]
    checkpoint = latest_checkpoint()
    return {
        "coupon_id": coupon.pk,
        "state_version": coupon.state_version,
        "operations": operations,
        "checkpoint": checkpoint_document(checkpoint) if checkpoint else None,
        **journal_proof(coupon, checkpoint, since),
    }


def coupon_entries(coupon: UserCoupon):
    """The journal entries about the coupon: those of every journaled row that names it
    (`JOURNAL_COUPON`), with their log positions, in entry order (one query).

    One branch per table, joined by UNION ALL, so each finds its rows by their coupon's index
    and its entries by the journal's (subject, subject_id): an OR of the tables would read the
    whole journal, a cost that grew with every coupon ever issued."""
    about = [JournalEntry.objects.filter(
                 subject=model._meta.label_lower, subject_id__in=model.objects.filter(
                     **{model.JOURNAL_COUPON: coupon.pk}).values("pk")).values("pk")
             for model in journaled_models() if model.JOURNAL_COUPON]
    if not about:
        return []
    return list(JournalEntry.objects.filter(pk__in=about[0].union(*about[1:], all=True))
                .select_related("leaf").order_by("pk"))


def stored_nodes(wanted: set[tuple[int, int]]) -> dict[tuple[int, int], bytes]:
    """The stored hashes of the complete subtrees `wanted`, in one query: level 0 from the
    log's leaves, the others from the sequencer's subtree hashes."""
    if not wanted:
        return {}
    leaves = [position for level, position in wanted if level == 0]
    above = [(level, position) for level, position in wanted if level]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT 0, index, leaf_hash FROM coupons_journalleaf WHERE index = ANY(%s::bigint[]) "
            "UNION ALL SELECT n.level, n.position, n.hash FROM coupons_journalnode n "
            "JOIN unnest(%s::int[], %s::bigint[]) AS w(level, position) "
            "ON n.level = w.level AND n.position = w.position",
            [leaves, [level for level, _ in above], [position for _, position in above]])
        return {(level, position): bytes.fromhex(node)
                for level, position, node in cursor.fetchall()}


def _path(nodes: dict, ranges) -> list[bytes] | None:
    try:
        return [merkle.range_root(nodes.__getitem__, start, end) for start, end in ranges]
    except KeyError:  # a stored subtree hash is missing: no path
        return None


NOT_SIGNED = _("The stored journal log does not lead this entry to the signed journal root: "
               "an entry or a stored subtree hash was changed after it was signed, so no path "
               "is served as proof. Run verify_ledger to name the position.")
NOT_CONSISTENT = _("The stored journal log does not prove that the signed journal extends the "
                   "older one: a stored subtree hash was changed after it was signed, so no "
                   "path is served as proof. Run verify_ledger to name the position.")


def _entry_path(entry, index: int, size: int, root: bytes, nodes: dict, ranges):
    """(the inclusion path, hex, None) when it leads the entry's own content to the signed
    root, else (None, why): the server never serves as proof a path it cannot check itself."""
    path = _path(nodes, ranges)
    leaf = merkle.leaf_hash(entry.content.encode())
    if path is None or merkle.root_from_path(index, size, leaf, path) != root:
        return None, str(NOT_SIGNED)
    return [node.hex() for node in path], None


def _consistency(older: dict, size: int, root: bytes, nodes: dict, ranges) -> dict:
    path = _path(nodes, ranges) if older["journal_size"] else []
    holds = path is not None and (not older["journal_size"] or merkle.consistency_holds(
        older["journal_size"], size, path, bytes.fromhex(older["journal_root"]), root))
    return {"since": older["number"], "since_size": older["journal_size"],
            "since_root": older["journal_root"],
            "path": [node.hex() for node in path] if holds else None,
            "problem": None if holds else str(NOT_CONSISTENT)}


def since_head(number: int, key) -> dict:
    """The journal head of the older checkpoint `number`, which must verify under `key`."""
    stored = LedgerCheckpoint.objects.filter(number=number).first()
    body = (json.loads(stored.body) if stored is not None
            and signature_holds(stored.body, stored.signature, key) else None)
    if body is None or body["number"] != number or body.get("journal_size") is None:
        raise NotFound(_("No verified checkpoint with this number signs a journal head."),
                       since=number)
    return body


def journal_proof(coupon: UserCoupon, checkpoint: LedgerCheckpoint | None,
                  since: int | None) -> dict:
    body = json.loads(checkpoint.body) if checkpoint is not None else {}
    size = body.get("journal_size")
    older = None
    if since is not None:
        if size is None:
            raise NotFound(_("No verified checkpoint signs a journal head yet."), since=since)
        older = since_head(since, verifying_key())
        if older["number"] > body["number"] or older["journal_size"] > size:
            raise NotFound(_("The checkpoint to prove consistency from must not be newer "
                             "than the newest verified one."), since=since,
                           newest=body["number"])
    entries = coupon_entries(coupon)
    covered = {entry.pk: entry.leaf.index for entry in entries
               if size and hasattr(entry, "leaf") and entry.leaf.index < size}
    ranges = {pk: merkle.inclusion_ranges(index, size) for pk, index in covered.items()}
    consistency = (merkle.consistency_ranges(older["journal_size"], size)
                   if older and older["journal_size"] else [])
    nodes = stored_nodes(merkle.pieces_of([*consistency,
                                            *(r for path in ranges.values() for r in path)]))
    root = bytes.fromhex(body["journal_root"]) if size is not None else b""
    paths = {entry.pk: _entry_path(entry, covered[entry.pk], size, root, nodes, ranges[entry.pk])
             for entry in entries if entry.pk in covered}
    return {
        "journal_head": None if size is None else {
            "checkpoint": body["number"], "size": size, "root": body["journal_root"]},
        "journal_entries": [
            {"entry_id": entry.pk, "table": entry.subject, "row_id": entry.subject_id,
             "kind": entry.kind, "content": entry.content, "content_hash": entry.content_hash,
             "log_index": covered.get(entry.pk),
             "inclusion_path": paths.get(entry.pk, (None, None))[0],
             "inclusion_problem": paths.get(entry.pk, (None, None))[1]}
            for entry in entries],
        "journal_consistency": None if older is None else _consistency(
            older, size, root, nodes, consistency),
    }


def checkpoint_coverage(*, coupon: UserCoupon, check) -> dict:
    """For the coupon page: the newest verified checkpoint, which the coupon's check rested on,
    and the newest version of this coupon whose ledger row's journal entry it signed, which
    the check found while folding (coupons/evidence/replay.py): no query of its own."""
    if check.checkpoint is None:
        return {"checkpoint": None}
    return {
        "checkpoint": check.checkpoint,
        "version": check.covered_version,
        "current": check.covered_version == coupon.state_version,
    }
