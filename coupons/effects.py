"""What a command will do, known before it runs: the plan its service then carries out.

A plan is the list of steps a decision's service executes (the ledger rows it appends, the
records it opens for a second person). The console words each step beside the button, and the
service executes the same steps, so the sentence an operator reads cannot drift from the rows
the button writes. A plan that the coupon would refuse now carries the refusal instead.
"""

from dataclasses import dataclass
from decimal import Decimal


@dataclass(frozen=True)
class Step:
    ROW = "ROW"  # one ledger row through the one compare-and-set
    RECORD = "RECORD"  # a compensation opened for a second operator; no ledger row yet
    ISSUE = "ISSUE"  # a new coupon issued to the same user

    kind: str
    op_type: str = ""
    from_state: str = ""
    to_state: str = ""
    amount: Decimal | None = None
    record_kind: str = ""
    template_id: int | None = None

    @classmethod
    def row(cls, op_type, from_state, to_state, amount=None) -> "Step":
        return cls(cls.ROW, op_type=op_type, from_state=from_state, to_state=to_state,
                   amount=amount)


@dataclass(frozen=True)
class Plan:
    steps: tuple = ()
    refusal: Exception | None = None  # the CouponError the command would answer now
    state: str = ""  # the coupon's state now, for a plan that changes nothing
