"""The coupon's state machine, held by the database too.

Every coupon write goes through `apply_transition` (coupons/write/transitions.py) or the
scanners' batch compare-and-set, which raise the version by one and move only along the
`TRANSITIONS` table. This trigger holds any other writer, the application's login with raw SQL
included, to the same: when a coupon's status, version or lease columns change, its
`state_version` rises by exactly one and (old status, new status) is a pair some operation of
the table allows. The pairs are the SQL function `coupons_state_moves()`, which a migration
writes from the Python table (`transitions.state_moves()`, copied into the migration as text,
as pgtrigger's migrations copy their SQL); tests/coupons/safety/test_database_holds_the_rules.py
holds the two equal, so changing one alone fails the suite. Unswitchable like the history's
triggers (coupons/models/append_only.py).
"""

import pgtrigger

from coupons.models.append_only import Unswitchable

# The columns a state change moves (apply_transition's CAS, the scanners' batches).
MOVING = ("status", "state_version", "current_lock_id", "locked_order_id", "lock_token_hash",
          "lock_expires_at")
# Owned by the owner; the application login may call it, not replace it.
PAIRS_FUNCTION = "coupons_state_moves"


def _row(prefix: str) -> str:
    return "(" + ", ".join(f"{prefix}.{column}" for column in MOVING) + ")"


class StateMoves(Unswitchable, pgtrigger.Trigger):
    when = pgtrigger.Before
    operation = pgtrigger.Update
    condition = pgtrigger.Condition(f"({_row('OLD')} IS DISTINCT FROM {_row('NEW')})")
    func = f"""
        IF NEW.state_version IS DISTINCT FROM OLD.state_version + 1 THEN
            RAISE EXCEPTION 'coupons: a coupon state moves with its state_version up by one'
                USING DETAIL = format('coupon %s: version %s to %s', OLD.id,
                                      OLD.state_version, NEW.state_version);
        END IF;
        IF NOT EXISTS (SELECT 1 FROM {PAIRS_FUNCTION}() m
                       WHERE m.from_status = OLD.status AND m.to_status = NEW.status) THEN
            RAISE EXCEPTION 'coupons: no operation moves a coupon from % to %',
                OLD.status, NEW.status USING DETAIL = format('coupon %s', OLD.id);
        END IF;
        RETURN NEW;"""


def state_moves_triggers() -> list:
    return [StateMoves(name="state_moves")]
