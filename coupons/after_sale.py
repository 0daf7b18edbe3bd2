"""The hooks through which the coupon core asks after-sale (refunds/) during its own commands.

After-sale sits on top of the core: it reads coupons and changes them only through the core's
transition function, and the core imports no refunds module (tests/architecture keeps it so).
A few moments of a coupon's own life need after-sale's answer in the core's transaction or
check; each is a hook declared below, by the signature its implementation takes. Refunds
installs its implementations when Django starts (RefundsConfig.ready, refunds/core_hooks.py).

A hook called before it is installed raises HookNotInstalled rather than answering for
after-sale: a skipped refund, an unowed compensation or an unchecked seal would be silent.

What the core only reads for a person (after-sale's rows in a coupon's timeline, the decisions
waiting for approval) is no hook: the console and the API pass those in.
"""

from collections.abc import Callable
from functools import update_wrapper
from inspect import signature


class HookNotInstalled(RuntimeError):
    """The core asked after-sale before refunds installed its answer."""


class Hook:
    """A named moment the core hands to after-sale; calling it calls the installed answer."""

    def __init__(self, declaration: Callable):
        update_wrapper(self, declaration)
        self.name = declaration.__name__
        self.parameters = list(signature(declaration).parameters)
        self.implementation: Callable | None = None

    def __call__(self, *args, **kwargs):
        if self.implementation is None:
            raise HookNotInstalled(f"after-sale has not installed {self.name} "
                                   "(refunds is not in INSTALLED_APPS, or Django is not set up)")
        return self.implementation(*args, **kwargs)

    def install(self, implementation: Callable) -> None:
        # The core calls by these names: an answer that takes others fails here, at start-up,
        # and not in the middle of a command.
        taken = list(signature(implementation).parameters)
        if taken != self.parameters:
            raise TypeError(f"{self.name} takes {self.parameters}; "
                            f"{implementation!r} takes {taken}")
        self.implementation = implementation


HOOKS: dict[str, Hook] = {}


def hook(declaration: Callable) -> Hook:
    HOOKS[declaration.__name__] = Hook(declaration)
    return HOOKS[declaration.__name__]


def install(**implementations: Callable) -> None:
    """Install after-sale's answers by hook name; an unknown name is refused, so a new hook is
    declared here (and listed in the layout test) before anything can answer it."""
    unknown = sorted(implementations.keys() - HOOKS.keys())
    if unknown:
        raise LookupError(f"no such after-sale hook: {', '.join(unknown)}")
    for name, implementation in implementations.items():
        HOOKS[name].install(implementation)


@hook
def decide_refunds_awaiting_redemption(*, coupon, redemption, ctx) -> None:
    """The redeem: a refund that came before its order's redemption is decided now, in the
    redeem's transaction, holding the coupon row (coupons.services.redeem)."""


@hook
def awaiting_redemption_sql(coupon: str) -> tuple[str, list]:
    """SQL (and its parameters) true when refunds of the coupon's leasing order wait for its
    redemption; `coupon` is the alias of the coupon row in the caller's statement
    (coupons.write.rows reads the flag with the row lock, so a redeem without such refunds
    spends no statement on them)."""


@hook
def receive_refund(*, refund_id, order_id, payment_id, refund_amount, refund_type, ctx,
                   risk_flag=False):
    """A RefundSucceeded fact is the same refund as POST refunds; answers the receipt, whose
    `decisions` and `notes` the fact's answer shows (coupons.events.handlers)."""


@hook
def owe_order_discount(*, order_id, coupon, amount, reason, actor) -> None:
    """A conflict case resolved by refunding the order's discount (coupons.services.cases)."""


@hook
def owe_presale_discount(*, order_id, coupon, amount, reason, actor) -> None:
    """A presale coupon lapsed before final payment and no substitute fits
    (coupons.events.presale)."""


@hook
def return_policy_named(value):
    """The return policy a template names by id or code, or ValidationFailed
    (coupons.services.templates)."""


@hook
def check_returns(report, coupon, operations) -> None:
    """Invariant 6 beyond the ledger: each RETURN among `operations` names its refund
    decision; failures go to `report` (coupons.evidence.replay)."""
