"""`ledger_checkpoint`: sign the head of the journal's Merkle log, keep it three ways.

In one snapshot (REPEATABLE READ on PostgreSQL; no LOCK TABLE, which the application role may
not take) it recomputes the log from the entries' contents, checks that it extends the head
this signer signed last (an RFC 9162 consistency proof) and folds the rows of the entries new
since then (coupons/evidence/new_entries.py); anything else is refused and nothing is signed.
The signed checkpoint then goes (a) into `LedgerCheckpoint`, append-only, (b) to the `coupons`
exchange as a `LedgerCheckpointed` outbox event, written in the same transaction, and (c)
after commit, to a new file in LEDGER_CHECKPOINT_DIR, opened with O_EXCL so a file is never
overwritten. A file missing from an earlier run (the disk was full) is written by the next run.
"""

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, connection, transaction

from coupons import clock
from coupons.evidence import merkle
from coupons.evidence.checkpoint_keys import (
    FORMAT,
    checkpoint_document,
    key_id,
    sign,
    signing_key,
)
from coupons.evidence.checkpoint_proofs import unverified_checkpoints
from coupons.evidence.checkpoint_verify import signed_body
from coupons.evidence.new_entries import unfolded_rows
from coupons.models import JournalLeaf, LedgerCheckpoint, OutboxEvent
from coupons.write.declared import declared_insert
from coupons.write.payloads import iso

EVENT_TYPE = "LedgerCheckpointed"
SIGNER = "system:ledger_checkpoint"
STREAM_ROWS = 5000


class CheckpointRefused(Exception):
    """Why no checkpoint was written (the command prints it and exits non-zero)."""


@dataclass
class CheckpointRun:
    checkpoint: LedgerCheckpoint
    files_written: list[Path] = field(default_factory=list)
    # Ids of stored rows this signer did not sign (any login can INSERT one): left alone.
    ignored_rows: list[int] = field(default_factory=list)


def checkpoint_directory() -> Path:
    if not settings.LEDGER_CHECKPOINT_DIR:
        raise CheckpointRefused("LEDGER_CHECKPOINT_DIR is not set: the directory that keeps a "
                                "copy of every signed checkpoint outside the database")
    directory = Path(settings.LEDGER_CHECKPOINT_DIR)
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def ledger_checkpoint() -> CheckpointRun:
    key = signing_key()  # first: refuse before reading anything
    directory = checkpoint_directory()
    # Only the outermost block can choose its isolation (a test's transaction already is one).
    snapshot = not connection.in_atomic_block
    try:
        with transaction.atomic(durable=True):
            run = _checkpoint_in_snapshot(key, directory, snapshot=snapshot)
    except IntegrityError as twin:
        raise CheckpointRefused("another ledger_checkpoint committed the same number first; "
                                "run it again") from twin
    run.files_written = write_missing_files(directory, key.public_key(), run.ignored_rows)
    return run


def _checkpoint_in_snapshot(key, directory: Path, *, snapshot: bool) -> CheckpointRun:
    if snapshot:
        with connection.cursor() as cursor:
            # The log and the rows from one moment, while commands go on; must be the first
            # statement.
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    now = clock.now()
    public = key.public_key()
    ignored = unverified_checkpoints(public)
    previous = own_previous(directory, public, ignored)
    if previous is not None:
        stored = LedgerCheckpoint.objects.filter(number=previous["number"]).first()
        if stored is None or json.loads(stored.body) != previous:
            raise CheckpointRefused(
                f"refusing to sign: the database no longer holds checkpoint "
                f"{previous['number']} as this signer signed it")
    journal = journal_head(previous)
    unfolded = unfolded_rows((previous or {}).get("journal_size") or 0)
    if unfolded:
        raise CheckpointRefused(
            f"refusing to sign: {len(unfolded)} journaled rows are not what the entries to be "
            "signed say (rolled back or rewritten past the services): "
            + "; ".join(unfolded[:10]))
    body = {
        "format": FORMAT,
        "number": _free_number(previous["number"] + 1 if previous else 1),
        "time": iso(now),
        "previous_number": previous["number"] if previous else None,
        "journal_size": journal.size,
        "journal_root": journal.root,
        "previous_journal_size": journal.previous_size,
        "previous_journal_root": journal.previous_root,
        "journal_consistency": journal.consistency,
        "key_id": key_id(public),
    }
    text, signature = sign(body, key)
    # The database journals it as it is inserted: the next checkpoint's head covers this one.
    checkpoint = declared_insert(LedgerCheckpoint(
        number=body["number"], signed_at=now, key_id=body["key_id"], body=text,
        signature=signature,
    ), actor=SIGNER)
    OutboxEvent.objects.create(
        event_type=EVENT_TYPE, coupon=None, operation=None, created_at=now,
        payload={**{k: v for k, v in body.items() if k != "format"},
                 "checkpoint_id": checkpoint.pk, **checkpoint_document(checkpoint)},
    )
    return CheckpointRun(checkpoint=checkpoint, ignored_rows=ignored)


@dataclass(frozen=True)
class JournalHead:
    size: int
    root: str
    previous_size: int | None
    previous_root: str | None
    # RFC 9162 PROOF(previous_size, D[size]), hex: signed with the head, so whoever kept the
    # previous head (a witness) checks this one against it from the two files alone.
    consistency: list[str]


def journal_head(previous: dict | None) -> JournalHead:
    """The journal's Merkle log as it is, every leaf recomputed from its entry's content;
    refused unless it extends the log `previous` signed (RFC 9162 consistency proof from its
    size and root to these)."""
    nodes = []
    while True:  # by pages of positions: a refusal leaves no cursor open in the transaction
        page = list(JournalLeaf.objects.filter(index__gte=len(nodes)).order_by("index")
                    .values_list("index", "leaf_hash", "entry__content")[:STREAM_ROWS])
        for index, stored, content in page:
            leaf = merkle.leaf_hash(content.encode())
            if index != len(nodes) or leaf.hex() != stored:
                raise CheckpointRefused(
                    f"refusing to sign: journal log position {len(nodes)} is missing or its "
                    "entry is not the one sequenced there")
            nodes.append(leaf)
        if len(page) < STREAM_ROWS:
            break
    root = merkle.root_of_nodes(nodes)
    signed_size = (previous or {}).get("journal_size") or 0
    proof = []
    if signed_size:
        signed_root = bytes.fromhex(previous["journal_root"])
        proof = merkle.consistency_proof(signed_size, nodes) if signed_size <= len(nodes) else []
        if signed_size > len(nodes) or not merkle.consistency_holds(
                signed_size, len(nodes), proof, signed_root, root):
            raise CheckpointRefused(
                f"refusing to sign: the journal log ({len(nodes)} entries) is not an "
                f"extension of the {signed_size} entries checkpoint {previous['number']} signed")
    return JournalHead(size=len(nodes), root=root.hex(),
                       previous_size=(previous or {}).get("journal_size"),
                       previous_root=(previous or {}).get("journal_root"),
                       consistency=[node.hex() for node in proof])


def own_previous(directory: Path, public, ignored: list[int]) -> dict | None:
    """The body of the newest checkpoint this signer signed: its files, each verified under its
    own key and linked to the one before, and the rows of the table that verify under that key
    (a run whose file was not written yet). Never a row it did not sign. A file that does not
    verify or does not follow is refused: the signer's own record was changed."""
    previous = None
    for path in sorted(directory.glob("checkpoint-*.json")):
        try:
            body = signed_body(json.loads(path.read_text()), public)
        except (ValueError, AttributeError):
            body = None
        if body is None:
            raise CheckpointRefused(f"refusing to sign: {path.name} does not verify under this "
                                    "signer's key (its own record was changed)")
        if previous is not None and (
                body["previous_number"], body.get("previous_journal_size"),
                body.get("previous_journal_root")) != (
                previous["number"], previous.get("journal_size"), previous.get("journal_root")):
            raise CheckpointRefused(f"refusing to sign: {path.name} does not follow "
                                    f"checkpoint {previous['number']}")
        previous = body
    newer = (LedgerCheckpoint.objects.exclude(pk__in=ignored)
             .filter(number__gt=previous["number"] if previous else 0).order_by("-number")
             .first())
    return json.loads(newer.body) if newer is not None else previous


def _free_number(number: int) -> int:
    """`number`, or the next one no stored row holds: a row someone else inserted under the
    number never takes it from the signer."""
    taken = set(LedgerCheckpoint.objects.filter(number__gte=number)
                .values_list("number", flat=True))
    while number in taken:
        number += 1
    return number


def checkpoint_file_name(number: int) -> str:
    return f"checkpoint-{number:08d}.json"


def write_missing_files(directory: Path, public, ignored: list[int]) -> list[Path]:
    """Every stored checkpoint this signer signed without its file gets one; an existing file
    is never touched, and a row it did not sign (`ignored`) never becomes a file."""
    present = {p.name for p in directory.glob("checkpoint-*.json")}
    signed = LedgerCheckpoint.objects.exclude(pk__in=ignored)
    missing = [number for number in signed.values_list("number", flat=True)
               if checkpoint_file_name(number) not in present]
    written = []
    for checkpoint in signed.filter(number__in=missing).order_by(
            "number").only("number", "body", "signature"):
        if signed_body(checkpoint_document(checkpoint), public) is None:
            continue
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
