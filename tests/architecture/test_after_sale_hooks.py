"""The hooks' own guards: a hook nobody answered refuses to answer for after-sale, and an
answer is installed only for a declared hook and only if it takes the hook's parameters."""

import pytest

from coupons import after_sale
from coupons.after_sale import Hook, HookNotInstalled


def owe(*, order_id, coupon, amount, reason, actor) -> None:
    """A declaration as coupons/after_sale.py writes one."""


def test_a_hook_nobody_answered_raises_instead_of_answering_for_after_sale():
    with pytest.raises(HookNotInstalled, match="owe"):
        Hook(owe)(order_id="A", coupon=None, amount=0, reason="", actor="")


def test_an_answer_with_other_parameters_is_refused_when_installed():
    hook = Hook(owe)
    with pytest.raises(TypeError, match="owe takes"):
        hook.install(lambda *, order_id, coupon, amount: None)
    assert hook.implementation is None


def test_an_answer_for_a_hook_the_core_does_not_declare_is_refused():
    installed = {name: hook.implementation for name, hook in after_sale.HOOKS.items()}
    with pytest.raises(LookupError, match="refund_everything"):
        after_sale.install(check_returns=print, refund_everything=print)
    assert {name: hook.implementation for name, hook in after_sale.HOOKS.items()} == installed


def test_the_installed_answer_is_the_one_called():
    hook = Hook(owe)
    owed = []
    hook.install(lambda *, order_id, coupon, amount, reason, actor: owed.append(order_id))
    hook(order_id="A", coupon=None, amount=0, reason="", actor="")
    assert owed == ["A"]
