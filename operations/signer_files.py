"""The signer's own record in LEDGER_CHECKPOINT_DIR: the only thing `ledger_checkpoint` trusts.

Per checkpoint N it keeps two files, both written before the database hears of N, opened with
O_EXCL (never overwritten) and fsynced:

- `checkpoint-0000000N.json`: the signed text and its signature (what the witness reads);
- `leaves-0000000N.bin`: the RFC 9162 leaf hashes (32 bytes each) of the log positions N
  signed that the checkpoint before it did not, so the whole signed log is the leaves files
  in number order, and `verify_ledger` names the one position whose entry changed.

The database's checkpoint rows are a copy the signer publishes and never reads back as truth.
Its chain is checked on every run: each file verifies under its key, is named as its number,
names the one before (number and journal head), and the leaves make the newest signed root.
Anything else means someone changed its own record: it refuses until a person puts the files
back or starts a new chain (`ledger_checkpoint --new-chain`, which moves them aside).
"""

import fcntl
import json
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from coupons import clock
from coupons.evidence import merkle
from coupons.evidence.checkpoint_verify import signed_body
from coupons.evidence.signed_leaves import leaves_file_name, read_leaves

LOCK_FILE = ".signer.lock"


class OwnRecordChanged(Exception):
    """A file of the signer's own chain does not verify or does not follow."""


class SignerBusy(Exception):
    """Another signer holds the directory's lock past the wait."""


@dataclass
class OwnChain:
    bodies: list[dict] = field(default_factory=list)  # oldest first
    documents: dict[int, dict] = field(default_factory=dict)  # number -> file content
    leaves: list[bytes] = field(default_factory=list)  # every signed position's leaf hash

    @property
    def newest(self) -> dict | None:
        return self.bodies[-1] if self.bodies else None

    @property
    def signed_size(self) -> int:
        return (self.newest or {}).get("journal_size") or 0


def checkpoint_file_name(number: int) -> str:
    return f"checkpoint-{number:08d}.json"


def own_chain(directory: Path, public, database_leaves) -> OwnChain:
    """The signer's chain from its files, every link checked. `database_leaves(start, end)`
    gives the log's leaves for a checkpoint signed before its leaves were kept: taken only
    when, with the rest, they make the newest signed root, and then kept as its file."""
    chain, missing = OwnChain(), []
    for path in sorted(directory.glob("checkpoint-*.json")):
        try:
            document = json.loads(path.read_text())
            body = signed_body(document, public) if isinstance(document, dict) else None
        except (ValueError, AttributeError):
            body = None
        if body is None or checkpoint_file_name(body.get("number", -1)) != path.name:
            raise OwnRecordChanged(f"{path.name} does not verify under this signer's key as "
                                   "the checkpoint it is named after")
        previous = chain.newest
        if previous is not None and (
                body["previous_number"], body.get("previous_journal_size"),
                body.get("previous_journal_root")) != (
                previous["number"], previous.get("journal_size"), previous.get("journal_root")):
            raise OwnRecordChanged(f"{path.name} does not follow checkpoint "
                                   f"{previous['number']}")
        start, end = chain.signed_size, body.get("journal_size") or 0
        leaves_path = directory / leaves_file_name(body["number"])
        if leaves_path.exists():
            leaves = read_leaves(leaves_path)
        else:
            leaves = database_leaves(start, end)
            missing.append((leaves_path, leaves))
        if len(leaves) != end - start:
            raise OwnRecordChanged(f"{leaves_path.name} holds {len(leaves)} leaves where "
                                   f"checkpoint {body['number']} signed {end - start}")
        chain.bodies.append(body)
        chain.documents[body["number"]] = document
        chain.leaves.extend(leaves)
    if chain.signed_size and merkle.root_of_nodes(chain.leaves).hex() != chain.newest[
            "journal_root"]:
        raise OwnRecordChanged(f"the leaves files do not make the journal root checkpoint "
                               f"{chain.newest['number']} signed")
    for path, leaves in missing:
        write_once(path, b"".join(leaves))
    return chain


def write_once(path: Path, data: bytes) -> bool:
    """Write a new file, read-only, synced to disk; False when it is there already (a file is
    never overwritten)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    return True


def keep_signed(directory: Path, number: int, document: dict, leaves: list[bytes]) -> Path:
    """The new checkpoint's two files, leaves first: a checkpoint file never stands without
    the leaves it signed."""
    write_once(directory / leaves_file_name(number), b"".join(leaves))
    path = directory / checkpoint_file_name(number)
    if not write_once(path, (json.dumps(document, indent=2) + "\n").encode()):
        raise OwnRecordChanged(f"{path.name} appeared while this signer signed it")
    return path


@contextmanager
def signer_lock(directory: Path, wait_seconds: float):
    """One signer at a time, on a lock only who can open the directory can take (the
    database's logins cannot); past `wait_seconds` it gives up with SignerBusy."""
    with open(directory / LOCK_FILE, "a") as lock:
        deadline = time.monotonic() + wait_seconds
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise SignerBusy(f"another ledger_checkpoint holds {directory / LOCK_FILE} "
                                     f"(waited {wait_seconds:g} s); nothing signed") from None
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def move_chain_aside(directory: Path) -> Path | None:
    """`--new-chain`: every checkpoint and leaves file into a `superseded-<time>` folder of
    the directory; the next checkpoint starts a chain of its own. None when there were none."""
    files = sorted([*directory.glob("checkpoint-*.json"), *directory.glob("leaves-*.bin")])
    if not files:
        return None
    aside = directory / f"superseded-{clock.now():%Y%m%dT%H%M%S}"
    aside.mkdir()
    for path in files:
        path.rename(aside / path.name)
    return aside


def highest_number_ever(directory: Path) -> int:
    """The highest number in any file name here or set aside: a new chain numbers after it."""
    numbers = [int(path.stem.split("-")[1]) for path in directory.glob("**/checkpoint-*.json")
               if path.stem.split("-")[1].isdigit()]
    return max(numbers, default=0)
