#!/usr/bin/env python3
"""Check a coupon's proof offline: python3 verify_coupon_proof.py PROOF.json --public-key KEY

PROOF.json is the answer of `GET /api/v1/coupons/{id}/proof`, saved. KEY is the coupon service's
published checkpoint key (`manage.py ledger_public_key`): base64 of the 32-byte Ed25519 public
key, PEM, or a file holding either. Never take the key from the proof or from whoever sends it.

Needs Python 3.11+ and the `cryptography` package only: no Django, no database, no network.
Copy this one file to wherever you verify. It checks:

1. the checkpoint's Ed25519 signature under KEY;
2. the coupon's leaf (coupon id, version, head hash) is in the signed Merkle tree: the RFC 9162
   inclusion path from the leaf leads to the signed root;
3. the ledger row at the leaf's version carries exactly the leaf's head hash;
4. the rows link: versions 1, 2, 3, ... and each row's `prev_hash` is the row before's
   `content_hash` ("" for the first).

What it cannot check: that each row's `content_hash` is the hash of that row's content. The service
computes those hashes as an HMAC under a chain key only the service holds (docs/evidence.md), so no
outsider can recompute them. What the signature then gives you: the rows up to the leaf's version
are the ones that existed when the checkpoint was signed (changing any of them changes the head
hash, or breaks the links); rows after it are not covered yet.

Exit status 0 when every check holds, 1 otherwise (each failure printed).
"""

import argparse
import base64
import binascii
import hashlib
import json
import struct
import sys
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

# --- RFC 9162 section 2.1 (the same as coupons/evidence/merkle.py) -----------------------------

def leaf_hash(leaf: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + leaf).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def head_leaf(coupon_id: int, version: int, head_hash: str) -> bytes:
    """Coupon id and version as unsigned 64-bit big-endian, then the head's hash as ASCII."""
    return struct.pack(">QQ", coupon_id, version) + head_hash.encode("ascii")


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


def problems_of(proof: dict, key: Ed25519PublicKey) -> tuple[list[str], str]:
    """(what fails, what holds in words)."""
    checkpoint = proof.get("checkpoint")
    if not checkpoint:
        return ["no checkpoint covers this coupon yet (the proof names none)"], ""
    try:
        key.verify(base64.b64decode(checkpoint["signature"], validate=True),
                   checkpoint["signed"].encode())
    except (InvalidSignature, ValueError, binascii.Error, KeyError, TypeError):
        return ["the checkpoint's signature does not verify under this key"], ""
    body = json.loads(checkpoint["signed"])
    leaf = proof.get("leaf")
    if not leaf:
        return [f"the coupon is newer than checkpoint {body['number']}: not covered yet"], ""
    found = []
    if leaf["coupon_id"] != proof.get("coupon_id"):
        found.append(f"the leaf is coupon {leaf['coupon_id']}'s, not coupon "
                     f"{proof.get('coupon_id')}'s")
    try:
        path = [bytes.fromhex(node) for node in proof["inclusion_path"]]
    except (ValueError, TypeError):
        path = []
        found.append("the inclusion path is not hex")
    root = root_from_path(leaf["index"], body["tree_size"],
                          leaf_hash(head_leaf(leaf["coupon_id"], leaf["version"],
                                              leaf["head_hash"])), path)
    if root is None or root.hex() != body["root"]:
        found.append(f"the leaf (v{leaf['version']}, head {leaf['head_hash'][:12]}...) is not in "
                     f"the tree signed as checkpoint {body['number']}")
    rows = proof.get("operations") or []
    previous = ""
    for expected_version, row in enumerate(rows, start=1):
        if row["to_version"] != expected_version:
            found.append(f"row v{row['to_version']} where v{expected_version} should be")
        if row["prev_hash"] != previous:
            found.append(f"row v{row['to_version']} does not follow the row before it "
                         f"(prev_hash)")
        previous = row["content_hash"]
    signed_row = next((row for row in rows if row["to_version"] == leaf["version"]), None)
    if signed_row is None:
        found.append(f"the ledger has no row v{leaf['version']}, the version the checkpoint "
                     f"signed")
    elif signed_row["content_hash"] != leaf["head_hash"]:
        found.append(f"row v{leaf['version']} is not the one checkpoint {body['number']} "
                     f"signed: the history was rewritten after the checkpoint")
    newer = len([row for row in rows if row["to_version"] > leaf["version"]])
    holds = (f"coupon {leaf['coupon_id']}: rows v1..v{leaf['version']} are the ones signed in "
             f"checkpoint {body['number']} at {body['time']}"
             + (f"; {newer} newer row(s) not covered yet" if newer else ""))
    return found, holds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("proof", help="the saved answer of GET /api/v1/coupons/{id}/proof")
    parser.add_argument("--public-key", required=True,
                        help="base64 or PEM Ed25519 public key, or a file holding it")
    args = parser.parse_args(argv)
    try:
        key = public_key(args.public_key)
        proof = json.loads(Path(args.proof).read_text())
    except (OSError, ValueError) as bad:
        print(f"cannot read the key or the proof: {bad}", file=sys.stderr)
        return 1
    try:
        found, holds = problems_of(proof, key)
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
