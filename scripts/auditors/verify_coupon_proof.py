#!/usr/bin/env python3
"""Check a coupon's proof offline: python3 verify_coupon_proof.py PROOF.json --public-key KEY
[--since checkpoint-0000000N.json]

PROOF.json is the answer of `GET /api/v1/coupons/{id}/proof`, saved. KEY is the coupon service's
published checkpoint key (`manage.py ledger_public_key`): base64 of the 32-byte Ed25519 public
key, PEM, or a file holding either. Never take the key from the proof or from whoever sends it.

Needs Python 3.11+ and the `cryptography` package only: no Django, no database, no network.
Copy this one file to wherever you verify. It checks:

1. the checkpoint's Ed25519 signature under KEY;
2. the ledger rows shown are versions 1, 2, 3, ... and at least one of them is signed;
3. every journal entry about the coupon (its refund decisions, compensations, cases, ...):
   its `content_hash` is the SHA-256 of its `content`, the content is about the row the entry
   names (and about this coupon when it records one), and, when the signed journal head covers
   it, the RFC 9162 inclusion path from SHA-256(0x00 || content) leads to the signed journal
   root: an entry's content edited in the saved proof (a kind, an amount) fails here;
4. each ledger row the proof shows (operation, states, time) is what its journal entry says:
   a REDEEM edited into a RELEASE in the saved proof fails here;
5. with --since, an older signed checkpoint file (the auditor's own copy, from
   LEDGER_CHECKPOINT_DIR or the events): its signature under KEY, and the consistency proof
   (the proof fetched with `?since=N`) from its journal head to the newest one's, so the
   journal the auditor saw then is a prefix of the one signed now.

The ledger rows are journal entries: check 4 binds each row shown to its entry, and check 3
binds each covered entry's very content to what was signed. An entry the signed journal head
does not cover yet (`log_index` null) is only checked against its own hash.

Exit status 0 when every check holds, 1 otherwise (each failure printed).
"""

import argparse
import base64
import binascii
import hashlib
import json
import sys
from datetime import datetime
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

LEDGER_TABLE = "coupons.couponoperation"


# --- RFC 9162 section 2.1 (the same as coupons/evidence/merkle.py) -----------------------------

def leaf_hash(leaf: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + leaf).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def root_from_path(index: int, size: int, leaf: bytes, path: list[bytes]) -> bytes | None:
    if index >= size:
        return None
    fn, sn, node = index, size - 1, leaf
    for sibling in path:
        if sn == 0:
            return None
        if fn & 1 or fn == sn:
            node = node_hash(sibling, node)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            node = node_hash(node, sibling)
        fn >>= 1
        sn >>= 1
    return node if sn == 0 else None


def consistency_holds(m: int, n: int, proof: list[bytes], old_root: bytes,
                      new_root: bytes) -> bool:
    """RFC 9162 2.1.4.2: the tree of size m with `old_root` is a prefix of the tree of size n."""
    if not 0 < m <= n:
        return False
    if m == n:
        return not proof and old_root == new_root
    if m & (m - 1) == 0:
        proof = [old_root, *proof]
    if not proof:
        return False
    fn, sn = m - 1, n - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = proof[0]
    for node in proof[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(node, fr)
            sr = node_hash(node, sr)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, node)
        fn >>= 1
        sn >>= 1
    return sn == 0 and fr == old_root and sr == new_root


# --- the checks -------------------------------------------------------------------------------

def public_key(text: str) -> Ed25519PublicKey:
    if len(text) < 4096 and Path(text).is_file():
        text = Path(text).read_text()
    text = text.strip()
    if text.startswith("-----BEGIN"):
        key = serialization.load_pem_public_key(text.encode())
        if not isinstance(key, Ed25519PublicKey):
            raise ValueError("not an Ed25519 public key")
        return key
    return Ed25519PublicKey.from_public_bytes(base64.b64decode(text, validate=True))


def signed_body(document: dict, key: Ed25519PublicKey) -> dict | None:
    """The signed checkpoint's body, or None when its signature does not hold under `key`."""
    try:
        key.verify(base64.b64decode(document["signature"], validate=True),
                   document["signed"].encode())
    except (InvalidSignature, ValueError, binascii.Error, KeyError, TypeError):
        return None
    return json.loads(document["signed"])


def hexes(nodes) -> list[bytes]:
    if not isinstance(nodes, list):
        raise ValueError("not a list of hex hashes")
    return [bytes.fromhex(node) for node in nodes]


def entry_problems(proof: dict, body: dict) -> tuple[list[str], int]:
    """What fails among the coupon's journal entries, and how many the signed head covers."""
    found, covered = [], 0
    size, root = body.get("journal_size"), body.get("journal_root")
    head = proof.get("journal_head")
    if head is not None and (head.get("size"), head.get("root")) != (size, root):
        found.append("the journal head shown is not the one the checkpoint signed")
    for entry in proof.get("journal_entries") or []:
        content, name = entry["content"], f"journal entry {entry.get('entry_id')}"
        if hashlib.sha256(content.encode()).hexdigest() != entry["content_hash"]:
            found.append(f"{name}: its content_hash is not the SHA-256 of its content (the "
                         f"content was edited)")
        said = json.loads(content)
        if (said.get("table"), said.get("id")) != (entry.get("table"), entry.get("row_id")):
            found.append(f"{name}: its content is about another row")
        row = said.get("row", {})
        if row.get("coupon_id", row.get("coupon_id_ref", proof.get("coupon_id"))) != \
                proof.get("coupon_id"):
            found.append(f"{name}: its content is about another coupon")
        if entry.get("log_index") is None:
            continue
        if entry.get("inclusion_path") is None:
            found.append(f"{name} (log position {entry['log_index']}): the server served no "
                         f"inclusion path: {entry.get('inclusion_problem')}")
            continue
        path = hexes(entry.get("inclusion_path"))
        leaf = leaf_hash(content.encode())
        reached = root_from_path(entry["log_index"], size or 0, leaf, path) if size else None
        if reached is None or reached.hex() != root:
            found.append(f"{name} (log position {entry['log_index']}): its content is not the "
                         f"one in the journal log signed as checkpoint {body['number']}")
        else:
            covered += 1
    return found, covered


def ledger_problems(proof: dict) -> list[str]:
    """That each ledger row the proof shows is what its journal entry says: the entry's hash is
    public, so an edited row (a REDEEM made a RELEASE, its states or time) no longer matches."""
    recorded = {}
    for entry in proof.get("journal_entries") or []:
        if entry.get("table") == LEDGER_TABLE:
            row = json.loads(entry["content"]).get("row", {})
            recorded[row.get("to_version")] = row
    found = []
    for shown in proof.get("operations") or []:
        row = recorded.get(shown.get("to_version"))
        if row is None:
            found.append(f"ledger row v{shown.get('to_version')}: no journal entry in the proof "
                         f"records it")
            continue
        differs = [key for key in ("op_type", "from_state", "to_state") if row.get(key) !=
                   shown.get(key)]
        if not same_time(row.get("created_at"), shown.get("created_at")):
            differs.append("created_at")
        if differs:
            found.append(f"ledger row v{shown['to_version']}: {', '.join(differs)} differ from "
                         f"its journal entry")
    return found


def same_time(recorded, shown) -> bool:
    try:
        return datetime.fromisoformat(recorded) == datetime.fromisoformat(shown)
    except (TypeError, ValueError):
        return False


def consistency_problems(proof: dict, body: dict, older: dict) -> list[str]:
    """That the journal head of `older` (an auditor's own signed file) is a prefix of the
    newest one's, by the proof's `journal_consistency`."""
    m, n = older.get("journal_size") or 0, body.get("journal_size") or 0
    if not m:
        return []
    given = proof.get("journal_consistency") or {}
    if (given.get("since"), given.get("since_size"), given.get("since_root")) != (
            older["number"], m, older["journal_root"]):
        return [f"the proof carries no consistency proof from checkpoint {older['number']}'s "
                f"journal head (fetch it with ?since={older['number']})"]
    if not consistency_holds(m, n, hexes(given.get("path")), bytes.fromhex(older["journal_root"]),
                             bytes.fromhex(body["journal_root"])):
        return [f"the journal signed as checkpoint {body['number']} ({n} entries) does not "
                f"extend the {m} entries checkpoint {older['number']} signed: the log was "
                f"rewritten"]
    return []


def problems_of(proof: dict, key: Ed25519PublicKey,
                older_document: dict | None = None) -> tuple[list[str], str]:
    """(what fails, what holds in words)."""
    checkpoint = proof.get("checkpoint")
    if not checkpoint:
        return ["no checkpoint covers this coupon yet (the proof names none)"], ""
    body = signed_body(checkpoint, key)
    if body is None:
        return ["the checkpoint's signature does not verify under this key"], ""
    older = None
    if older_document is not None:
        older = signed_body(older_document, key)
        if older is None:
            return ["the --since checkpoint's signature does not verify under this key"], ""
    journal_found, covered = entry_problems(proof, body)
    journal_found += ledger_problems(proof)
    journal_found += consistency_problems(proof, body, older) if older else []
    entries = len(proof.get("journal_entries") or [])
    journal_holds = (f"; {covered} of {entries} journal entries are in the journal log "
                     f"signed there" if entries else "")
    if older:
        journal_holds += (f"; that journal extends the one checkpoint {older['number']} "
                          f"signed")
    found = journal_found
    rows = proof.get("operations") or []
    for expected_version, row in enumerate(rows, start=1):
        if row["to_version"] != expected_version:
            found.append(f"row v{row['to_version']} where v{expected_version} should be")
    signed = {json.loads(entry["content"]).get("row", {}).get("to_version")
              for entry in proof.get("journal_entries") or []
              if entry.get("table") == LEDGER_TABLE and entry.get("inclusion_path") is not None}
    covered_rows = [row for row in rows if row["to_version"] in signed]
    if not covered_rows:
        return [f"the coupon is newer than checkpoint {body['number']}: not covered yet",
                *found], ""
    newer = len(rows) - len(covered_rows)
    holds = (f"coupon {proof.get('coupon_id')}: rows v1..v{covered_rows[-1]['to_version']} are "
             f"in the journal log signed as checkpoint {body['number']} at {body['time']}"
             + (f"; {newer} newer row(s) not covered yet" if newer else "") + journal_holds)
    return found, holds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("proof", help="the saved answer of GET /api/v1/coupons/{id}/proof")
    parser.add_argument("--public-key", required=True,
                        help="base64 or PEM Ed25519 public key, or a file holding it")
    parser.add_argument("--since", help="an older signed checkpoint file you kept: check "
                        "that its journal is a prefix of the proof's (fetch the proof with "
                        "?since=<its number>)")
    args = parser.parse_args(argv)
    try:
        key = public_key(args.public_key)
        proof = json.loads(Path(args.proof).read_text())
        older = json.loads(Path(args.since).read_text()) if args.since else None
    except (OSError, ValueError) as bad:
        print(f"cannot read the key, the proof or the older checkpoint: {bad}", file=sys.stderr)
        return 1
    try:
        found, holds = problems_of(proof, key, older)
    except (KeyError, TypeError, ValueError, AttributeError) as bad:
        found, holds = [f"the proof is malformed: {bad!r}"], ""
    for problem in found:
        print(f"FAILED: {problem}")
    if found:
        return 1
    print(f"OK: {holds}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
