"""`verify_ledger`: does the database still hold the history a signed checkpoint vouches for?

1. The checkpoint's signature, under a public key the verifier brings (never one from the file).
2. The database's copy of the checkpoint is the signed one, and its stored chunks reproduce the
   signed root (so the stored leaves are the signed ones).
3. Every coupon's ledger row at its checkpointed version still carries the checkpointed head
   hash, and every coupon's chain verifies (coupons/evidence/ledger_chain.py), rows written since
   too. A rewrite after the checkpoint that re-chains every later row with the right chain function,
   even under a stolen chain key, changes the row's hash at that version: it fails here.
4. Against the previous checkpoint: it is the one this one names (number, root, size), and no
   coupon went missing or back to an older version (the tree's leaves are heads that move, not
   an append-only log, so RFC 9162's consistency proof does not apply; this per-leaf check is
   its counterpart).

What it cannot see: a rewrite before the first checkpoint that covers the coupon. Whoever
re-chains then produces heads the checkpoint signs as they are (docs/evidence.md).
"""

import json
from collections import defaultdict
from dataclasses import dataclass, field

from coupons.evidence import merkle
from coupons.evidence.checkpoint_keys import signature_holds
from coupons.evidence.ledger_chain import chain_breaks
from coupons.models import (
    CouponOperation,
    LedgerCheckpoint,
    LedgerCheckpointChunk,
    UnkeyedLedgerPrefix,
    UserCoupon,
)

BATCH = 1000


@dataclass
class Verdict:
    number: int | None = None
    coupons_checked: int = 0
    checkpoints_checked: int = 0
    journal_positions: int = 0
    problems: list[str] = field(default_factory=list)  # not about one coupon
    broken: dict[int, list[str]] = field(default_factory=lambda: defaultdict(list))

    @property
    def ok(self) -> bool:
        return not self.problems and not self.broken


def signed_body(document: dict, public_key) -> dict | None:
    signed, signature = document.get("signed"), document.get("signature")
    if not isinstance(signed, str) or not isinstance(signature, str):
        return None
    if not signature_holds(signed, signature, public_key):
        return None
    return json.loads(signed)


def signed_chain(documents: list[tuple[str, dict]], public_key, verdict: Verdict) -> list[dict]:
    """The signed bodies from the newest document back to the first checkpoint, oldest first:
    each under `public_key` and each the one the next names as its previous (number, root, size
    and journal head). A link missing from `documents` is taken from the database, whose rows
    count only when they verify. A document off that chain is a fork: reported."""
    given = {}
    for name, document in documents:
        body = signed_body(document, public_key) if isinstance(document, dict) else None
        if body is None:
            verdict.problems.append(f"{name}: the checkpoint's signature does not verify under "
                                    "this key")
        elif given.setdefault(body["number"], body) != body:
            verdict.problems.append(f"two different signed checkpoints are numbered "
                                    f"{body['number']}: the log forked")
    if not given:
        return []
    newest = given[max(given)]
    stored = {number: {"signed": body, "signature": signature} for number, body, signature in
              LedgerCheckpoint.objects.filter(number__lt=newest["number"])
              .values_list("number", "body", "signature")}
    chain = [newest]
    while (number := chain[-1]["previous_number"]) is not None:
        body = given.get(number)
        if body is None and number in stored:
            body = signed_body(stored[number], public_key)
        named = chain[-1]
        if body is None:
            verdict.problems.append(f"checkpoint {number}, which checkpoint {named['number']} "
                                    "names as its previous, is missing or does not verify "
                                    "under this key")
            break
        if (body["root"], body["tree_size"]) != (named["previous_root"],
                                                 named["previous_size"]) or (
                "previous_journal_size" in named and (
                    body.get("journal_size"), body.get("journal_root")) != (
                    named["previous_journal_size"], named["previous_journal_root"])):
            verdict.problems.append(f"checkpoint {number} is not the one checkpoint "
                                    f"{named['number']} names as its previous")
            break
        chain.append(body)
    on_chain = {body["number"] for body in chain}
    verdict.problems.extend(f"checkpoint {number} is not on the chain of checkpoint "
                            f"{newest['number']}: the log forked" for number in sorted(given)
                            if number not in on_chain)
    verdict.checkpoints_checked = len(chain)
    return chain[::-1]


def checkpoint_entries(checkpoint: LedgerCheckpoint, verdict: Verdict):
    """The checkpoint's leaves in order, each chunk checked against its signed root first."""
    chunks = LedgerCheckpointChunk.objects.in_bulk(set(checkpoint.chunk_roots), field_name="root")
    for number, root in enumerate(checkpoint.chunk_roots):
        chunk = chunks.get(root)
        entries = chunk.entries if chunk else []
        computed = merkle.root_of_nodes(
            [merkle.leaf_hash(merkle.head_leaf(*entry)) for entry in entries]).hex()
        if not entries or computed != root:
            verdict.problems.append(
                f"checkpoint {checkpoint.number}: its stored leaves of chunk {number} (coupons "
                f"from {checkpoint.chunk_first_ids[number]}) are missing or altered")
            continue
        yield from entries


def verify_checkpoint(document: dict, public_key) -> Verdict:
    verdict = Verdict()
    body = signed_body(document, public_key)
    if body is None:
        verdict.problems.append("the checkpoint's signature does not verify under this key")
        return verdict
    verdict.number = body["number"]
    stored = LedgerCheckpoint.objects.filter(number=body["number"]).first()
    if stored is None or stored.body != document["signed"]:
        verdict.problems.append(f"the database's checkpoint {body['number']} is "
                                f"{'missing' if stored is None else 'not the signed one'}")
        return verdict
    roots = [bytes.fromhex(root) for root in stored.chunk_roots]
    if merkle.root_of_nodes(roots).hex() != body["root"]:
        verdict.problems.append(f"checkpoint {stored.number}: the stored chunk roots do not "
                                f"reproduce the signed root")
        return verdict
    _verify_coupons(stored, verdict)
    _verify_previous(stored, body, verdict)
    return verdict


def _coupon_batches():
    last = 0
    while True:
        ids = list(UserCoupon.objects.filter(id__gt=last).order_by("id")
                   .values_list("id", flat=True)[:BATCH])
        if not ids:
            return
        yield ids
        last = ids[-1]


def _verify_coupons(checkpoint: LedgerCheckpoint, verdict: Verdict) -> None:
    """Walks the database's coupons and the checkpoint's leaves side by side, both by id."""
    leaves = checkpoint_entries(checkpoint, verdict)
    leaf = next(leaves, None)
    for ids in _coupon_batches():
        rows = defaultdict(list)
        for op in CouponOperation.objects.filter(coupon_id__in=ids).order_by("coupon_id",
                                                                               "to_version"):
            rows[op.coupon_id].append(op)
        # Rows written before the chain was keyed verify against their coupon's sealed prefix.
        prefixes = {prefix.coupon_id: prefix for prefix in UnkeyedLedgerPrefix.objects.filter(
            coupon_id__in=[c for c, ops in rows.items() if not all(op.chain_key_id for op in ops)])}
        for coupon_id in ids:
            while leaf is not None and leaf[0] < coupon_id:
                verdict.broken[leaf[0]].append(
                    f"in checkpoint {checkpoint.number} but no longer in the database")
                leaf = next(leaves, None)
            if leaf is not None and leaf[0] == coupon_id:
                _verify_head(checkpoint.number, leaf, rows[coupon_id], verdict)
                leaf = next(leaves, None)
            problems, _notes = chain_breaks(rows[coupon_id], prefixes.get(coupon_id))
            if problems:
                verdict.broken[coupon_id].extend(problems)
            verdict.coupons_checked += 1
    while leaf is not None:
        verdict.broken[leaf[0]].append(
            f"in checkpoint {checkpoint.number} but no longer in the database")
        leaf = next(leaves, None)


def _verify_head(number: int, leaf, operations, verdict: Verdict) -> None:
    coupon_id, version, head = leaf
    row = next((op for op in operations if op.to_version == version), None)
    if row is None:
        verdict.broken[coupon_id].append(f"its ledger row v{version}, signed in checkpoint "
                                         f"{number}, is gone")
    elif row.content_hash != head:
        verdict.broken[coupon_id].append(
            f"its ledger row v{version} is not the one checkpoint {number} signed: the history "
            f"up to v{version} was rewritten after the checkpoint")


def _verify_previous(checkpoint: LedgerCheckpoint, body: dict, verdict: Verdict) -> None:
    """The signed body names the previous checkpoint's root and size, so the stored previous
    checkpoint needs no signature of its own here (it may be under a key since rotated)."""
    if body["previous_number"] is None:
        return
    previous = LedgerCheckpoint.objects.filter(number=body["previous_number"]).first()
    roots = [bytes.fromhex(root) for root in previous.chunk_roots] if previous else []
    if previous is None or (merkle.root_of_nodes(roots).hex(), previous.tree_size) != (
            body["previous_root"], body["previous_size"]):
        verdict.problems.append(f"the stored previous checkpoint {body['previous_number']} is "
                                f"{'missing' if previous is None else 'not the one signed'}")
        return
    scratch = Verdict()  # the previous checkpoint's chunk problems are its own verification's
    newer = checkpoint_entries(checkpoint, scratch)
    leaf = next(newer, None)
    for coupon_id, version, head in checkpoint_entries(previous, scratch):
        while leaf is not None and leaf[0] < coupon_id:
            leaf = next(newer, None)
        if leaf is None or leaf[0] != coupon_id:
            verdict.broken[coupon_id].append(
                f"in checkpoint {previous.number} but not in checkpoint {checkpoint.number}")
        elif leaf[1] < version or (leaf[1] == version and leaf[2] != head):
            verdict.broken[coupon_id].append(
                f"checkpoint {checkpoint.number} has v{leaf[1]}, after v{version} in "
                f"checkpoint {previous.number}: its history went back or was rewritten")
    verdict.problems.extend(p for p in scratch.problems if p not in verdict.problems)
