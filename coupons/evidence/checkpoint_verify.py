"""`verify_ledger`: does the database still hold the history the signed checkpoints vouch for?

1. Each checkpoint's signature, under a public key the verifier brings (never one from the
   file), and the chain of them: each names the one before by number and journal head.
2. The database's copy of the newest checkpoint is the signed one.
3. The journal's Merkle log against every signed journal head, and every journaled row
   against its entries (coupons/evidence/journal_verify.py).

What it cannot see: a row and its entry rewritten together before the first checkpoint whose
journal head covers the entry (docs/evidence.md).
"""

import json
from collections import defaultdict
from dataclasses import dataclass, field

from coupons.evidence.checkpoint_keys import signature_holds
from coupons.models import LedgerCheckpoint


@dataclass
class Verdict:
    number: int | None = None
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
    each under `public_key` and each the one the next names as its previous (number and
    journal head; root and size too for checkpoints that signed a tree of coupons). A link
    missing from `documents` is taken from the database, whose rows count only when they
    verify. A document off that chain is a fork: reported."""
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
        if ("previous_root" in named and (body.get("root"), body.get("tree_size")) != (
                named["previous_root"], named["previous_size"])) or (
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


def verify_checkpoint(document: dict, public_key) -> Verdict:
    """The newest checkpoint's signature, and that the database holds it as signed."""
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
