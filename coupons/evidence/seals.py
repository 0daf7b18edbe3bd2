"""Seals on the evidence rows outside the ledger: an HMAC of each row under LEDGER_CHAIN_KEYS.

Redemptions, order bindings, refusals, inbox messages with their outcomes and compensation
decisions are what support and reconciliation read beside the ledger. Each carries `seal`,
"<key id>:<HMAC-SHA256 of the table name and the row's canonical content>", set in process when
the row is written (coupons.models.sealed), so no statement is added. Columns that move by
design (a redemption's `succeeded`) are left out; a value written once later (an inbox outcome,
a compensation's decision) is sealed with it.

A per-row seal shows a row that was changed; it cannot show a row that was deleted, nor a
whole row inserted by someone holding the key. The surrogate id is left out (it is not known
before the INSERT), so two rows of one table swapped whole are not caught either.
"""

import hmac

from django.conf import settings
from django.utils.translation import gettext

from coupons.evidence.ledger_chain import canonical_json, current_key_id, mac

SEAL_COLUMNS = {"id", "seal"}


def row_seal(row, key_id: str | None = None, leaves_out: tuple[str, ...] | None = None) -> str:
    """`leaves_out` defaults to the model's SEAL_LEAVES_OUT (a migration's historical model has
    none, so the migration names them)."""
    key_id = key_id or current_key_id()
    if leaves_out is None:
        leaves_out = row.SEAL_LEAVES_OUT
    skip = SEAL_COLUMNS | set(leaves_out)
    return f"{key_id}:" + mac(key_id, f"seal:{row._meta.label_lower}", canonical_json(row, skip))


def seal_problem(row, leaves_out: tuple[str, ...] | None = None) -> str | None:
    """Why the row's seal fails, in words, or None when it holds."""
    if not row.seal:
        return gettext("has no seal")
    key_id, _, _ = row.seal.partition(":")
    if key_id not in settings.LEDGER_CHAIN_KEYS:
        return (gettext("is sealed under key id %(key)s, which LEDGER_CHAIN_KEYS does not hold")
                % {"key": repr(key_id)})
    if not hmac.compare_digest(row.seal, row_seal(row, key_id, leaves_out)):
        return gettext("was changed after it was sealed")
    return None


def broken_seals(rows) -> list[str]:
    """One sentence per row of `rows` whose seal fails."""
    return [gettext("%(row)s %(id)s %(problem)s")
            % {"row": row._meta.verbose_name, "id": row.pk, "problem": problem}
            for row in rows if (problem := seal_problem(row)) is not None]
