"""The per-coupon check's look at the journal's newest entries about the coupon: a rollback
shows (coupons/evidence/replay.py).

The check reads the coupon's rows and folds each against its entries; a row deleted past the
triggers takes nothing with it to fold, and a coupon set back to an older state with its
newer ledger rows, redemption and order binding deleted replays cleanly to that state. Their
journal entries stay (the journal is append-only, and the owner who deletes them too cuts
the signed log, which the signer refuses). So the check also reads the first entries of
the ledger rows, order bindings and redemptions that name this coupon, newest first, from the
index `journal_coupon_idx` (migration coupons/0038_journal_by_coupon): an entry whose row is
gone is named, and so is a coupon row behind the version or state its newest ledger entry
records. A view reads at most the newest
COUPON_CHECK_NEWEST_ROWS of them (a rollback takes the newest rows); the full check, all.

The coupon is found in the entry's text, not its parsed JSON: an entry any login INSERTs
that is no JSON must not make the check fail, and the canonical form (no whitespace, keys
sorted, every quote inside a string escaped) writes `"coupon_id":` only as the key of the
row's own column.
"""

import json

from django.db import connection
from django.utils.translation import gettext

from coupons.models import CouponOperation, JournalEntry, OrderCoupon, Redemption, UserCoupon
from coupons.models.journal import PRUNED

ENTRIES = JournalEntry._meta.db_table
LEDGER = CouponOperation._meta.label_lower
# What a rollback of a command deletes: its ledger row, the order binding a LOCK wrote, the
# redemption a REDEEM wrote.
TABLES = (CouponOperation, OrderCoupon, Redemption)
# The index's expression and predicate, word for word (the planner matches them as text,
# literals included: a parameter would not prove the predicate).
COUPON_OF_ENTRY = "substring(e.content from '\"coupon_id\":([0-9]{1,19})[,}]')"
SUBJECTS = ("e.parent_hash IS NULL AND e.subject IN ("
            + ", ".join(f"'{model._meta.label_lower}'" for model in TABLES) + ")")
TO_VERSION = "substring(t.content from '\"to_version\":([0-9]{1,9})[,}]')::int"
TO_STATE = "substring(t.content from '\"to_state\":\"([A-Z_]{1,32})\"')"


def _row_exists_sql() -> str:
    cases = " ".join(
        f"WHEN '{model._meta.label_lower}' THEN EXISTS (SELECT 1 FROM "  # noqa: S608
        f"{connection.ops.quote_name(model._meta.db_table)} r WHERE "
        f"r.{connection.ops.quote_name(model._meta.pk.column)} = t.subject_id)"
        for model in TABLES)
    return f"CASE t.subject {cases} END"


def tail_sql(coupon_id: int, newest: int | None) -> tuple[str, list]:
    """A scalar subquery (JSON text) for the statement the journal check already sends: the
    coupon row's state and version, and of the newest `newest` (None: all) first entries about
    the coupon those whose row is gone (unless retention deleted it) and the newest ledger
    entry, with the version and state it records."""
    sql = (
        "(SELECT json_build_object("
        f"'status', (SELECT status FROM {UserCoupon._meta.db_table} WHERE id = %s), "  # noqa: S608
        f"'version', (SELECT state_version FROM {UserCoupon._meta.db_table} WHERE id = %s), "
        "'entries', (SELECT json_agg(json_build_object('entry', t.id, 'table', t.subject, "
        "'row', t.subject_id, 'gone', NOT t.present, 'newest', t.id = t.newest_ledger, "
        # Read from the text of the one entry that needs it: a regular expression costs.
        f"'version', CASE WHEN t.id = t.newest_ledger THEN {TO_VERSION} END, "
        f"'state', CASE WHEN t.id = t.newest_ledger THEN {TO_STATE} END) "
        "ORDER BY t.id) FROM ("
        f"SELECT t.*, {_row_exists_sql()} AS present, "
        "max(CASE WHEN t.subject = %s THEN t.id END) OVER () AS newest_ledger FROM ("
        f"SELECT e.id, e.subject, e.subject_id, e.content FROM {ENTRIES} e "
        f"WHERE {COUPON_OF_ENTRY} = %s AND {SUBJECTS} "
        "ORDER BY e.id DESC LIMIT %s) t) t "
        "WHERE t.id = t.newest_ledger OR (NOT t.present AND NOT EXISTS ("
        f"SELECT 1 FROM {ENTRIES} p WHERE p.subject = t.subject "
        "AND p.subject_id = t.subject_id AND p.kind = %s))))::text)")
    return sql, [coupon_id, coupon_id, LEDGER, str(coupon_id), newest, PRUNED]


def tail_problems(text: str | None) -> list[tuple[int, str]]:
    """(invariant, sentence) for each problem the subquery of tail_sql found."""
    if text is None:
        return []
    tail = json.loads(text)
    problems = []
    for entry in tail["entries"] or []:
        if entry["gone"]:
            problems.append((9, gettext(
                "journal entry %(entry)s records %(table)s %(row)s, which is gone (deleted "
                "past the services)") % {"entry": entry["entry"], "table": entry["table"],
                                         "row": entry["row"]}))
        if entry["newest"] and (entry["version"], entry["state"]) != (
                tail["version"], tail["status"]):
            problems.append((7, gettext(
                "journal entry %(entry)s records ledger row %(row)s, which leaves the coupon "
                "%(state)s v%(version)s; the coupon row says %(status)s v%(now)s") % {
                "entry": entry["entry"], "row": entry["row"], "state": entry["state"],
                "version": entry["version"], "status": tail["status"],
                "now": tail["version"]}))
    return problems
