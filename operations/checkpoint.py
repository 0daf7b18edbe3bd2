"""`ledger_checkpoint`: sign the head of the journal's Merkle log, keep it three ways.

The signer trusts only its own files (operations/signer_files.py): its chain of signed heads
and the leaf hashes each one signed. In one snapshot (REPEATABLE READ on PostgreSQL) it reads
the log, compares the positions it signed before with the leaves it kept, takes the new
positions as the sequencer wrote them, folds the rows of the new entries
(coupons/evidence/new_entries.py) and compares the database's checkpoint rows with its files.
What disagrees is a finding (reported, exit status 3), never a reason to stop: it signs its
own signed log extended by the new positions, so its chain never forks and a witness accepts
the new head. It refuses only when its own record was changed (exit status 1; recovery:
`--new-chain`) and gives up, signing nothing, when another signer holds its directory (75).

The checkpoint is written (a) to its files, leaves first, before the database hears of it,
(b) to `LedgerCheckpoint`, a published copy, journaled, and (c) to the `coupons` exchange as a
`LedgerCheckpointed` outbox event. The database's copies are published each in a savepoint
under a lock timeout: a row any login inserted under the number, or holds uncommitted, is a
finding, and a file whose row is missing is published by the next run.
"""

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from django.conf import settings
from django.db import DatabaseError, connection, transaction

from coupons import clock
from coupons.evidence import merkle
from coupons.evidence.checkpoint_keys import (
    FORMAT,
    checkpoint_document,
    key_id,
    sign,
    signature_holds,
    signing_key,
)
from coupons.evidence.journal_verify import coupons_of_entries
from coupons.evidence.new_entries import unfolded_rows
from coupons.models import JournalLeaf, LedgerCheckpoint, OutboxEvent
from coupons.write.declared import declared_insert
from coupons.write.payloads import iso
from operations import signer_files
from operations.signer_files import OwnRecordChanged

EVENT_TYPE = "LedgerCheckpointed"
SIGNER = "system:ledger_checkpoint"
STREAM_ROWS = 5000
# Bounds every lock the signer waits for in the database (a row another login inserted under
# the number and holds uncommitted): past it the copy is a finding, the signing goes on.
LOCK_TIMEOUT = "5s"
# How long a second signer waits for the first before it gives up.
DIRECTORY_WAIT_SECONDS = 30.0

class CheckpointRefused(Exception):
    """Why no checkpoint was written (the command prints it and exits 1)."""


@dataclass
class CheckpointRun:
    checkpoint: LedgerCheckpoint
    files_written: list[Path] = field(default_factory=list)
    # What disagrees with the signer's record: reported, signed over all the same.
    findings: list[str] = field(default_factory=list)


def checkpoint_directory() -> Path:
    if not settings.LEDGER_CHECKPOINT_DIR:
        raise CheckpointRefused("LEDGER_CHECKPOINT_DIR is not set: the directory that keeps the "
                                "signer's own record of every signed checkpoint")
    directory = Path(settings.LEDGER_CHECKPOINT_DIR)
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def ledger_checkpoint(*, new_chain: bool = False, progress=None) -> CheckpointRun:
    """`progress` (common/progress.py) follows the reading of the journal's log: most of a
    first checkpoint's time. Interrupted, the run signs nothing; the next reads again."""
    key = signing_key()  # first: refuse before reading anything
    directory = checkpoint_directory()
    # Only the outermost block can choose its isolation (a test's transaction already is one).
    snapshot = not connection.in_atomic_block
    with signer_files.signer_lock(directory, DIRECTORY_WAIT_SECONDS):
        if new_chain:
            signer_files.move_chain_aside(directory)
        with transaction.atomic(durable=True):
            return _sign_in_snapshot(key, directory, snapshot=snapshot, progress=progress)


def _sign_in_snapshot(key, directory: Path, *, snapshot: bool, progress) -> CheckpointRun:
    with connection.cursor() as cursor:
        if snapshot:
            # The log and the rows from one moment, while commands go on; must be the first
            # statement.
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        cursor.execute("SELECT set_config('lock_timeout', %s, true)", [LOCK_TIMEOUT])
    public = key.public_key()
    if progress is not None:
        progress.expect(JournalLeaf.objects.count())
    log = read_log(progress)
    try:
        chain = signer_files.own_chain(directory, public, log.stored_leaves)
    except OwnRecordChanged as changed:
        raise CheckpointRefused(f"refusing to sign: {changed}; put the files back, or start "
                                "a new chain with `ledger_checkpoint --new-chain`") from changed
    rows = list(LedgerCheckpoint.objects.order_by("number")
                .values_list("pk", "number", "body", "signature"))
    _refuse_a_lost_file(max((chain.newest or {}).get("number") or 0,
                            signer_files.highest_number_ever(directory)), rows, public)
    findings = log.signed_part_findings(chain.leaves)
    new, gap = log.new_leaves(chain.signed_size)
    findings += gap
    findings += unfolded_rows(chain.signed_size)
    previous = chain.newest
    number = previous["number"] + 1 if previous else _first_number(directory, rows, public)
    findings += _rows_unlike_the_files(chain, rows, chain.bodies[0]["number"] if previous
                                       else number)
    head = _head(chain, new)
    now = clock.now()
    body = {
        "format": FORMAT,
        "number": number,
        "time": iso(now),
        "previous_number": previous["number"] if previous else None,
        "journal_size": head.size,
        "journal_root": head.root,
        "previous_journal_size": head.previous_size,
        "previous_journal_root": head.previous_root,
        "journal_consistency": head.consistency,
        "key_id": key_id(public),
    }
    text, signature = sign(body, key)
    checkpoint = LedgerCheckpoint(number=body["number"], signed_at=now, key_id=body["key_id"],
                                  body=text, signature=signature)
    try:
        path = signer_files.keep_signed(directory, body["number"],
                                        checkpoint_document(checkpoint), new)
    except OwnRecordChanged as changed:
        raise CheckpointRefused(f"refusing to sign: {changed}") from changed
    chain.documents[body["number"]] = checkpoint_document(checkpoint)
    published, refused = _publish(chain, {taken for _, taken, _, _ in rows}, now)
    return CheckpointRun(checkpoint=published.get(body["number"], checkpoint),
                         files_written=[path], findings=findings + refused)


@dataclass
class Log:
    """The journal's log as the database holds it: per position its entry and the leaf the
    sequencer stored, and the leaf recomputed from the entry's content."""

    entry_ids: list[int] = field(default_factory=list)
    stored: list[bytes] = field(default_factory=list)
    recomputed: list[bytes] = field(default_factory=list)
    missing_from: int | None = None  # the first position with no leaf, when one is missing

    def stored_leaves(self, start: int, end: int) -> list[bytes]:
        return self.stored[start:end]

    def signed_part_findings(self, own: list[bytes]) -> list[str]:
        """A sentence per position the signer signed whose entry now makes another leaf."""
        changed = [position for position, leaf in enumerate(own)
                   if position >= len(self.recomputed) or self.recomputed[position] != leaf]
        return _named(self, changed, "its entry is not the one the signer signed there "
                                     "(rewritten or removed after it was signed)")

    def new_leaves(self, signed: int) -> tuple[list[bytes], list[str]]:
        """The leaves of the positions after `signed` up to the first one missing, as the
        sequencer stored them; and a sentence per entry whose content no longer makes its
        leaf, and for a missing position."""
        end = len(self.stored) if self.missing_from is None else self.missing_from
        rewritten = [position for position in range(signed, end)
                     if self.stored[position] != self.recomputed[position]]
        findings = _named(self, rewritten, "its entry's content is not what the sequencer "
                                           "logged (signed as logged)")
        if self.missing_from is not None and self.missing_from >= signed:
            findings.append(f"journal log position {self.missing_from} is missing: signed up "
                            "to it, not past it")
        return self.stored[signed:end], findings


def read_log(progress=None) -> Log:
    log = Log()
    while True:  # by pages of positions: no cursor left open in the transaction
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT l.index, l.entry_id, l.leaf_hash, e.content FROM coupons_journalleaf l "
                "LEFT JOIN coupons_journalentry e ON e.id = l.entry_id WHERE l.index >= %s "
                "ORDER BY l.index LIMIT %s", [len(log.stored), STREAM_ROWS])
            page = cursor.fetchall()
        for index, entry_id, stored, content in page:
            if index != len(log.stored):
                log.missing_from = len(log.stored)
                return log
            log.entry_ids.append(entry_id)
            log.stored.append(bytes.fromhex(stored))
            log.recomputed.append(merkle.leaf_hash(content.encode()) if content is not None
                                  else b"")
        if progress is not None:
            progress.advance(len(page))
        if len(page) < STREAM_ROWS:
            return log


def _named(log: Log, positions: list[int], problem: str) -> list[str]:
    entries = [log.entry_ids[p] for p in positions if p < len(log.entry_ids)]
    about = coupons_of_entries(entries)
    findings = []
    for position in positions:
        if position >= len(log.entry_ids):
            findings.append(f"journal log position {position}: {problem}")
            continue
        entry = log.entry_ids[position]
        table, row_id, coupon = about.get(entry, (None, None, None))
        of = f" of coupon {coupon}" if coupon is not None else ""
        findings.append(f"journal log position {position} (entry {entry}, {table} {row_id}"
                        f"{of}): {problem}")
    return findings


@dataclass(frozen=True)
class JournalHead:
    size: int
    root: str
    previous_size: int | None
    previous_root: str | None
    # RFC 9162 PROOF(previous_size, D[size]), hex: signed with the head, so whoever kept the
    # previous head (a witness) checks this one against it from the two files alone.
    consistency: list[str]


def _head(chain, new: list[bytes]) -> JournalHead:
    """The signer's own signed leaves extended by the new ones: by construction an extension
    of the head it signed last, which the consistency proof it signs shows."""
    nodes = [*chain.leaves, *new]
    root = merkle.root_of_nodes(nodes)
    previous = chain.newest or {}
    signed = chain.signed_size
    proof = merkle.consistency_proof(signed, nodes) if signed else []
    if signed and not merkle.consistency_holds(signed, len(nodes), proof,
                                               bytes.fromhex(previous["journal_root"]), root):
        raise CheckpointRefused(f"refusing to sign: its own leaves do not extend checkpoint "
                                f"{previous['number']}")
    return JournalHead(size=len(nodes), root=root.hex(),
                       previous_size=previous.get("journal_size"),
                       previous_root=previous.get("journal_root"),
                       consistency=[node.hex() for node in proof])


def _genuine(body_text: str, signature: str, public) -> dict | None:
    if not signature_holds(body_text, signature, public):
        return None
    return json.loads(body_text)


def _refuse_a_lost_file(newest: int, rows, public) -> None:
    """A row this signer signed, under its own number, newer than every file it has or set
    aside (`newest`): one of its files went missing. Signing that number again would fork
    the chain under the real key."""
    for _, number, text, signature in rows:
        if number > newest and (body := _genuine(text, signature, public)) is not None \
                and body["number"] == number:
            raise CheckpointRefused(
                f"refusing to sign: the database holds checkpoint {number}, signed by this key, "
                f"which {signer_files.checkpoint_file_name(number)} no longer holds: put the "
                "file back (its row's signed text and signature are its content), or start a "
                "new chain with `ledger_checkpoint --new-chain`")


def _rows_unlike_the_files(chain, rows, first: int) -> list[str]:
    """A sentence per checkpoint row that is not the checkpoint this signer signed under its
    number (a copy under another number, a forgery), and per own checkpoint with no row. Rows
    numbered before its chain began (`first`: a chain set aside by `--new-chain`) are history."""
    findings, present = [], set()
    for pk, number, text, signature in rows:
        present.add(number)
        if number >= first and chain.documents.get(number) != {
                "signed": text, "signature": signature}:
            findings.append(f"checkpoint row {pk} numbered {number} is not the checkpoint "
                            f"this signer signed as {number}: a copy or a forgery, ignored")
    findings.extend(f"checkpoint {body['number']} has no row in the database: published again"
                    for body in chain.bodies if body["number"] not in present)
    return findings


def _first_number(directory: Path, rows, public) -> int:
    """A chain's first number: after every number its files ever had and every row this key
    signed, so a new chain never reuses one; a row any login inserted counts for nothing."""
    signed = [number for _, number, text, signature in rows
              if (body := _genuine(text, signature, public)) is not None
              and body["number"] == number]
    return max([signer_files.highest_number_ever(directory), *signed]) + 1


def _publish(chain, present: set[int], now) -> tuple[dict, list[str]]:
    """The database's copies of every own checkpoint without a row: the row (journaled) and its
    event, in a savepoint each. A refusal is a finding, not a stop; the next run tries again.
    Answers the rows written, by number, and the findings."""
    published, findings = {}, []
    for number in sorted(set(chain.documents) - present):
        document = chain.documents[number]
        signed = json.loads(document["signed"])
        row = LedgerCheckpoint(number=number, signed_at=datetime.fromisoformat(signed["time"]),
                               key_id=signed["key_id"], body=document["signed"],
                               signature=document["signature"])
        try:
            with transaction.atomic():
                # With its journal entry, in one statement: the next head covers this one.
                if declared_insert(row, actor=SIGNER, ignore_conflicts=True) is None:
                    findings.append(f"checkpoint {number}: its number is held in the database "
                                    "by a row this signer did not write; not published there")
                    continue
                OutboxEvent.objects.create(
                    event_type=EVENT_TYPE, coupon=None, operation=None, created_at=now,
                    payload={**{k: v for k, v in signed.items() if k != "format"},
                             "checkpoint_id": row.pk, **document})
            published[number] = row
        except DatabaseError as refused:
            findings.append(f"checkpoint {number} could not be published in the database "
                            f"({str(refused).strip()}); the next run tries again")
    return published, findings
