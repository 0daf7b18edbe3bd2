#!/usr/bin/env python3
"""Witness the coupon service's signed journal heads:
python3 ledger_witness.py --state STATE.json [--public-key KEY] CHECKPOINT_OR_DIR ...

Run it where the coupon service cannot write (another host, another owner), on the checkpoint
files (LEDGER_CHECKPOINT_DIR, or the LedgerCheckpointed events saved as {"signed", "signature"}
files), after every checkpoint. It keeps the last signed checkpoint it accepted in STATE.json
and accepts the newer ones, in number order, only when each

1. verifies under the key (given the first time with --public-key and then kept in the state:
   a checkpoint under another key is refused, whoever made it);
2. names the one before it (number, journal size and root);
3. carries an RFC 9162 consistency proof (`journal_consistency`, signed with it) from the
   journal head before it to its own that holds against the head this witness kept.

A checkpoint that fails, or another checkpoint with the number it already accepted (a fork),
is refused: exit status 1, the reason printed, and STATE.json left as it was. So a log
rewritten below a size the witness saw cannot be signed as a continuation, not even by the
holder of the signing key, without the witness refusing it.

Needs Python 3.11+, the `cryptography` package and verify_coupon_proof.py beside this file:
no Django, no database, no network. Exit 0 when every new checkpoint was accepted (or there
was none).
"""

import argparse
import base64
import json
import os
import sys
import tempfile
from pathlib import Path

from cryptography.hazmat.primitives import serialization

sys.path.insert(0, str(Path(__file__).resolve().parent))

from verify_coupon_proof import consistency_holds, public_key, signed_body  # noqa: E402


class Refused(Exception):
    """Why a checkpoint was not accepted."""


def raw(key) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def documents(paths: list[str]) -> list[tuple[str, dict]]:
    found = []
    for text in paths:
        path = Path(text)
        for file in sorted(path.glob("checkpoint-*.json")) if path.is_dir() else [path]:
            document = json.loads(file.read_text())
            found.append((file.name, document if isinstance(document, dict) else {}))
    return found


def follows(last: dict, body: dict, name: str) -> None:
    """Refuses `body` unless it is the signed continuation of `last` (both signed bodies)."""
    if body.get("previous_number") != last["number"]:
        raise Refused(f"{name}: checkpoint {body['number']} names checkpoint "
                      f"{body.get('previous_number')} as its previous, not checkpoint "
                      f"{last['number']}, the last this witness accepted (give it the files in "
                      f"between)")
    if "previous_root" in body and (body["previous_root"], body.get("previous_size")) != (
            last.get("root"), last.get("tree_size")):
        # A checkpoint of the first format also signed a tree of coupons, named by its root.
        raise Refused(f"{name}: checkpoint {body['number']} names another checkpoint "
                      f"{last['number']} than the one this witness accepted")
    m, n = last.get("journal_size") or 0, body.get("journal_size") or 0
    named = (body.get("previous_journal_size") or 0,
             body.get("previous_journal_root") if m else None)
    if named != (m, last.get("journal_root") if m else None):
        raise Refused(f"{name}: checkpoint {body['number']} names another journal head before "
                      f"it than the {m} entries this witness accepted")
    if not m:
        return
    try:
        proof = [bytes.fromhex(node) for node in body.get("journal_consistency") or []]
        holds = n >= m and consistency_holds(m, n, proof, bytes.fromhex(last["journal_root"]),
                                             bytes.fromhex(body["journal_root"]))
    except (ValueError, TypeError, KeyError):
        holds = False
    if not holds:
        raise Refused(f"{name}: the journal signed as checkpoint {body['number']} ({n} "
                      f"entries) is not an extension of the {m} entries this witness accepted "
                      f"at checkpoint {last['number']}: the log was rewritten or forked")


def witness(state: dict | None, key, given: list[tuple[str, dict]]) -> tuple[dict | None, list]:
    """(the new state's document, the numbers accepted); raises Refused."""
    last = signed_body(state, key) if state else None
    if state and last is None:
        raise Refused("the state file's checkpoint does not verify under its key")
    bodies = []
    for name, document in given:
        body = signed_body(document, key)
        if body is None:
            raise Refused(f"{name}: its signature does not verify under the witnessed key")
        bodies.append((body["number"], name, body, document))
    accepted, newest = [], state
    for number, name, body, document in sorted(bodies, key=lambda item: item[0]):
        if last is not None and number < last["number"]:
            continue
        if last is not None and number == last["number"]:
            if document["signed"] != (newest or {}).get("signed"):
                raise Refused(f"{name}: another checkpoint {number} than the one this witness "
                              f"accepted: the log forked")
            continue
        if last is not None:
            follows(last, body, name)
        last, newest = body, {"signed": document["signed"], "signature": document["signature"]}
        accepted.append(number)
    return newest, accepted


def save(path: Path, state: dict) -> None:
    """Atomically: a witness stopped halfway keeps its old state."""
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".witness-")
    with os.fdopen(fd, "w") as out:
        json.dump(state, out, indent=2)
        out.write("\n")
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, path)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoints", nargs="+", help="checkpoint files or directories")
    parser.add_argument("--state", required=True, help="the witness's own file: the last "
                        "checkpoint it accepted and the key")
    parser.add_argument("--public-key", help="base64 or PEM Ed25519 public key, or a file "
                        "holding it; needed the first time, then kept in the state")
    args = parser.parse_args(argv)
    state_path = Path(args.state)
    try:
        state = json.loads(state_path.read_text()) if state_path.exists() else None
        if state is None and not args.public_key:
            raise ValueError("the first run needs --public-key")
        key = public_key(state["public_key"] if state else args.public_key)
        if state and args.public_key and raw(public_key(args.public_key)) != raw(key):
            print("REFUSED: --public-key is not the key this witness keeps: a new key is a new "
                  "log, start a new state file deliberately")
            return 1
        given = documents(args.checkpoints)
    except (OSError, ValueError, KeyError, TypeError) as bad:
        print(f"cannot read the state, the key or the checkpoints: {bad}", file=sys.stderr)
        return 1
    try:
        newest, accepted = witness(state and state.get("checkpoint"), key, given)
    except Refused as refused:
        print(f"REFUSED: {refused}")
        return 1
    except (KeyError, TypeError, ValueError, AttributeError) as bad:
        print(f"REFUSED: a checkpoint is malformed: {bad!r}")
        return 1
    if not accepted:
        print("nothing new" + (f" since checkpoint {json.loads(newest['signed'])['number']}"
                               if newest else ""))
        return 0
    save(state_path, {"public_key": base64.b64encode(raw(key)).decode(), "checkpoint": newest})
    body = json.loads(newest["signed"])
    print(f"accepted checkpoints {', '.join(map(str, accepted))}: the journal is "
          f"{body.get('journal_size') or 0} entries, root {body.get('journal_root')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
