"""`ledger_checkpoint`: sign the Merkle root over every coupon's chain head, keep it three ways.

One snapshot (REPEATABLE READ on PostgreSQL; no LOCK TABLE, which the application role may not
take) reads each coupon's head: the ledger row at the coupon's `state_version`, in coupon id
order, streamed. Leaves are hashed chunk by chunk (merkle.CHUNK), so memory follows a chunk,
not the table; a chunk already stored by an earlier checkpoint (same coupons, same heads) is
not stored again. The signed checkpoint then goes (a) into `LedgerCheckpoint`, append-only,
(b) to the `coupons` exchange as a `LedgerCheckpointed` outbox event, written in the same
transaction, and (c) after commit, to a new file in LEDGER_CHECKPOINT_DIR, opened with O_EXCL
so a file is never overwritten. A file missing from an earlier run (the disk was full) is
written by the next run.
"""

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import F

from coupons import clock
from coupons.evidence import merkle
from coupons.evidence.checkpoint_keys import (
    FORMAT,
    checkpoint_document,
    key_id,
    sign,
    signing_key,
)
from coupons.models import (
    CouponOperation,
    LedgerCheckpoint,
    LedgerCheckpointChunk,
    OutboxEvent,
)
from coupons.write.payloads import iso

EVENT_TYPE = "LedgerCheckpointed"
STREAM_ROWS = 5000
FLUSH_CHUNKS = 32  # chunks looked up and inserted per round trip


class CheckpointRefused(Exception):
    """Why no checkpoint was written (the command prints it and exits non-zero)."""


@dataclass
class CheckpointRun:
    checkpoint: LedgerCheckpoint
    files_written: list[Path] = field(default_factory=list)
    chunks_stored: int = 0


def checkpoint_directory() -> Path:
    if not settings.LEDGER_CHECKPOINT_DIR:
        raise CheckpointRefused("LEDGER_CHECKPOINT_DIR is not set: the directory that keeps a "
                                "copy of every signed checkpoint outside the database")
    directory = Path(settings.LEDGER_CHECKPOINT_DIR)
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def chain_heads():
    """(coupon id, version, head hash) of every coupon, in coupon id order, streamed."""
    return (
        CouponOperation.objects.filter(to_version=F("coupon__state_version"))
        .order_by("coupon_id")
        .values_list("coupon_id", "to_version", "content_hash")
        .iterator(chunk_size=STREAM_ROWS)
    )


class _Chunks:
    """Closes chunks of leaves as the heads stream in; stores the ones not yet stored."""

    def __init__(self):
        self.roots, self.first_ids, self.pending, self.stored, self.size = [], [], {}, 0, 0

    def close(self, entries: list) -> None:
        root = merkle.root_of_nodes(
            [merkle.leaf_hash(merkle.head_leaf(*entry)) for entry in entries]).hex()
        self.roots.append(root)
        self.first_ids.append(entries[0][0])
        self.size += len(entries)
        self.pending[root] = entries
        if len(self.pending) >= FLUSH_CHUNKS:
            self.flush()

    def flush(self) -> None:
        known = set(LedgerCheckpointChunk.objects.filter(root__in=self.pending)
                    .values_list("root", flat=True))
        new = [LedgerCheckpointChunk(root=root, entries=entries)
               for root, entries in self.pending.items() if root not in known]
        # A concurrent run may store the same chunk (same content, same root): either row does.
        LedgerCheckpointChunk.objects.bulk_create(new, ignore_conflicts=True)
        self.stored += len(new)
        self.pending = {}


def ledger_checkpoint() -> CheckpointRun:
    key = signing_key()  # first: refuse before reading anything
    directory = checkpoint_directory()
    # Only the outermost block can choose its isolation (a test's transaction already is one).
    snapshot = not connection.in_atomic_block
    try:
        with transaction.atomic(durable=True):
            run = _checkpoint_in_snapshot(key, snapshot=snapshot)
    except IntegrityError as twin:
        raise CheckpointRefused("another ledger_checkpoint committed the same number first; "
                                "run it again") from twin
    run.files_written = write_missing_files(directory)
    return run


def _checkpoint_in_snapshot(key, *, snapshot: bool) -> CheckpointRun:
    if snapshot:
        with connection.cursor() as cursor:
            # Every head from one moment, while commands go on; must be the first statement.
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    now = clock.now()
    previous = LedgerCheckpoint.objects.order_by("-number").first()
    chunks, entries = _Chunks(), []
    for coupon_id, version, head in chain_heads():
        entries.append([coupon_id, version, head])
        if len(entries) == merkle.CHUNK:
            chunks.close(entries)
            entries = []
    if entries:
        chunks.close(entries)
    chunks.flush()
    root = merkle.root_of_nodes([bytes.fromhex(r) for r in chunks.roots]).hex()
    body = {
        "format": FORMAT,
        "number": previous.number + 1 if previous else 1,
        "tree_size": chunks.size,
        "root": root,
        "time": iso(now),
        "previous_number": previous.number if previous else None,
        "previous_root": previous.root if previous else None,
        "previous_size": previous.tree_size if previous else None,
        "key_id": key_id(key.public_key()),
    }
    text, signature = sign(body, key)
    checkpoint = LedgerCheckpoint.objects.create(
        number=body["number"], tree_size=body["tree_size"], root=root, signed_at=now,
        key_id=body["key_id"], body=text, signature=signature, chunk_roots=chunks.roots,
        chunk_first_ids=chunks.first_ids,
    )
    OutboxEvent.objects.create(
        event_type=EVENT_TYPE, coupon=None, operation=None, created_at=now,
        payload={**{k: v for k, v in body.items() if k != "format"},
                 "checkpoint_id": checkpoint.pk, **checkpoint_document(checkpoint)},
    )
    return CheckpointRun(checkpoint=checkpoint, chunks_stored=chunks.stored)


def checkpoint_file_name(number: int) -> str:
    return f"checkpoint-{number:08d}.json"


def write_missing_files(directory: Path) -> list[Path]:
    """Every stored checkpoint without its file gets one; an existing file is never touched."""
    present = {p.name for p in directory.glob("checkpoint-*.json")}
    missing = [number for number in LedgerCheckpoint.objects.values_list("number", flat=True)
               if checkpoint_file_name(number) not in present]
    written = []
    for checkpoint in LedgerCheckpoint.objects.filter(number__in=missing).order_by(
            "number").only("number", "body", "signature"):
        path = directory / checkpoint_file_name(checkpoint.number)
        # O_EXCL: a file that appeared meanwhile (another run) is left as it is.
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
        except FileExistsError:
            continue
        with os.fdopen(fd, "w") as out:
            json.dump(checkpoint_document(checkpoint), out, indent=2)
            out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        written.append(path)
    return written
