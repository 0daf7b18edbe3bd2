from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from coupons.errors import AlreadyExists, NotFound, TermsConflict, ValidationFailed
from coupons.models import CouponTemplate, CouponTemplateVersion, OrderCoupon, UserCoupon
from coupons.services import (
    coupon_issue,
    coupon_redeem,
    coupon_release,
    template_create,
    template_update,
)
from tests.conftest import START, lock

pytestmark = pytest.mark.django_db

AMOUNT_OFF = {"code": "off10", "name": "10 off", "kind": "AMOUNT_OFF",
              "face_value": Decimal("10.00"), "valid_days": 7}
JUNE = datetime(2026, 6, 1, tzinfo=UTC)
JULY = datetime(2026, 7, 1, tzinfo=UTC)


def create_refused(**terms) -> dict:
    """Create must refuse these terms, store nothing, and say which fields are wrong."""
    with pytest.raises(ValidationFailed) as caught:
        template_create(**terms)
    assert not CouponTemplate.objects.exists()
    assert not CouponTemplateVersion.objects.exists()
    return caught.value.details


# --- create -------------------------------------------------------------------------------


def test_created_template_is_version_one_with_frozen_terms(clock):
    template = template_create(**AMOUNT_OFF, min_order_amount=Decimal("50.00"))

    assert template.version == 1
    frozen = CouponTemplateVersion.objects.get(template=template)
    assert frozen.version == 1
    assert frozen.terms() == template.terms()
    assert frozen.created_at == START
    assert frozen.min_order_amount == Decimal("50.00")
    assert frozen.expiry_during_lock == "LOCK_HONORS"
    assert frozen.returnable is True


@pytest.mark.parametrize(
    "terms",
    [
        pytest.param({"kind": "PERCENT_OFF", "face_value": None, "percent_off": Decimal("12.5"),
                      "max_discount": Decimal("20.00")}, id="percent"),
        pytest.param({"kind": "PERCENT_OFF", "face_value": None, "percent_off": Decimal("100")},
                     id="percent-100-no-cap"),
        pytest.param({"kind": "EXCHANGE", "face_value": Decimal("59.90")}, id="exchange"),
        pytest.param({"valid_days": None, "valid_from": JUNE, "valid_until": JULY},
                     id="fixed-window"),
        pytest.param({"valid_days": None, "valid_until": JULY}, id="open-start"),
        pytest.param({"expiry_during_lock": "STRICT", "returnable": False}, id="strict"),
    ],
)
def test_valid_terms_are_accepted(clock, terms):
    template = template_create(**{**AMOUNT_OFF, **terms})

    assert CouponTemplateVersion.objects.get(template=template).terms() == template.terms()


@pytest.mark.parametrize(
    ("terms", "problem_fields"),
    [
        pytest.param({"face_value": None}, {"face_value"}, id="amount-off-without-value"),
        pytest.param({"face_value": Decimal("0")}, {"face_value"}, id="amount-off-zero"),
        pytest.param({"kind": "EXCHANGE", "face_value": None}, {"face_value"},
                     id="exchange-without-value"),
        pytest.param({"kind": "PERCENT_OFF", "percent_off": None}, {"percent_off"},
                     id="percent-missing"),
        pytest.param({"kind": "PERCENT_OFF", "percent_off": Decimal("0")}, {"percent_off"},
                     id="percent-zero"),
        pytest.param({"kind": "PERCENT_OFF", "percent_off": Decimal("100.01")}, {"percent_off"},
                     id="percent-above-100"),
        pytest.param({"kind": "PERCENT_OFF", "percent_off": Decimal("-5")}, {"percent_off"},
                     id="percent-negative"),
        pytest.param({"valid_days": None}, {"valid_until"}, id="no-validity"),
        pytest.param({"valid_until": JULY}, {"valid_until"}, id="window-and-days"),
        pytest.param({"valid_days": None, "valid_from": JULY, "valid_until": JULY},
                     {"valid_from"}, id="empty-window"),
        pytest.param({"valid_days": None, "valid_from": JULY, "valid_until": JUNE},
                     {"valid_from"}, id="backwards-window"),
        pytest.param({"face_value": None, "valid_days": None}, {"face_value", "valid_until"},
                     id="every-problem-at-once"),
    ],
)
def test_invalid_terms_are_refused_with_every_problem_named(clock, terms, problem_fields):
    details = create_refused(**{**AMOUNT_OFF, **terms})

    assert set(details) == problem_fields


def test_duplicate_code_is_refused(clock):
    first = template_create(**AMOUNT_OFF)

    with pytest.raises(AlreadyExists) as caught:
        template_create(**{**AMOUNT_OFF, "name": "another"})

    assert caught.value.details == {"code": "off10", "template_id": first.pk,
                                    "current_version": 1}
    assert CouponTemplate.objects.get().name == "10 off"
    assert CouponTemplateVersion.objects.count() == 1


# --- update -------------------------------------------------------------------------------


def test_update_makes_a_new_version_and_keeps_the_old_one_unchanged(clock):
    template = template_create(**AMOUNT_OFF)
    clock.advance(days=1)

    updated = template_update(template_id=template.pk, face_value=Decimal("15.00"))

    assert updated.version == 2
    template.refresh_from_db()
    assert (template.version, template.face_value) == (2, Decimal("15.00"))
    assert template.updated_at == START + timedelta(days=1)
    v1, v2 = CouponTemplateVersion.objects.filter(template=template).order_by("version")
    assert (v1.version, v1.face_value, v1.created_at) == (1, Decimal("10.00"), START)
    assert (v2.version, v2.face_value) == (2, Decimal("15.00"))
    assert v2.terms() == template.terms()


def test_update_with_no_change_makes_no_new_version(clock):
    template = template_create(**AMOUNT_OFF)

    template_update(template_id=template.pk, face_value=Decimal("10.00"), name="10 off")

    template.refresh_from_db()
    assert template.version == 1
    assert CouponTemplateVersion.objects.count() == 1


def test_update_of_an_unknown_template_is_not_found(clock):
    with pytest.raises(NotFound) as caught:
        template_update(template_id=9999, name="x")

    assert caught.value.details == {"template_id": 9999}


def test_update_to_invalid_terms_is_refused_as_a_conflict_and_changes_nothing(clock):
    template = template_create(**AMOUNT_OFF)

    with pytest.raises(TermsConflict) as caught:
        template_update(template_id=template.pk, kind="PERCENT_OFF")

    assert set(caught.value.details) == {"percent_off", "current_version"}
    template.refresh_from_db()
    assert (template.version, template.kind) == (1, "AMOUNT_OFF")
    assert CouponTemplateVersion.objects.count() == 1


def test_an_edit_whose_own_fields_break_a_rule_is_invalid_whatever_is_stored(clock):
    template = template_create(**AMOUNT_OFF)

    with pytest.raises(ValidationFailed) as caught:
        template_update(template_id=template.pk, valid_until=START + timedelta(days=60),
                        valid_days=10)

    assert set(caught.value.details) == {"valid_until"}
    template.refresh_from_db()
    assert template.version == 1


def test_issued_coupons_keep_their_template_version(template, coupon, ctx):
    template_update(template_id=template.pk, face_value=Decimal("50.00"), valid_days=90,
                    min_order_amount=Decimal("500.00"))
    newer = coupon_issue(template_id=template.pk, user_id="u2", ctx=ctx).coupon

    coupon = UserCoupon.objects.get(pk=coupon.pk)
    assert coupon.template_version.version == 1
    assert coupon.template_version.face_value == Decimal("30.00")
    assert coupon.valid_until == START + timedelta(days=30)
    assert newer.template_version.version == 2
    assert newer.valid_until == START + timedelta(days=90)


def test_an_old_coupon_prices_orders_by_its_own_version(template, coupon, ctx):
    template_update(template_id=template.pk, face_value=Decimal("50.00"),
                    min_order_amount=Decimal("500.00"))

    result, _ = lock(coupon, ctx, amount="250.00")  # under v2's threshold, fine under v1's

    assert result.discount_amount == Decimal("30.00")
    assert OrderCoupon.objects.get(lock=result.lock).template_version.version == 1


def test_order_discount_snapshot_survives_template_edits(template, coupon, ctx):
    result, proof = lock(coupon, ctx, amount="300.00", quote_id="Q-1")
    template_update(template_id=template.pk, face_value=Decimal("80.00"))
    template_update(template_id=template.pk, kind="PERCENT_OFF", percent_off=Decimal("50"))

    redemption = coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id="P1",
                               ctx=ctx).redemption

    snapshot = OrderCoupon.objects.get(lock=result.lock)
    assert (snapshot.order_amount, snapshot.discount_amount, snapshot.quote_id) == (
        Decimal("300.00"), Decimal("30.00"), "Q-1",
    )
    assert snapshot.template_version.version == 1
    assert redemption.discount_amount == Decimal("30.00")


def test_relock_after_an_edit_still_uses_the_issued_version(template, coupon, ctx):
    _, proof = lock(coupon, ctx)
    coupon_release(coupon_id=coupon.pk, lease=proof, ctx=ctx)
    template_update(template_id=template.pk, face_value=Decimal("45.00"))

    result, _ = lock(coupon, ctx, order_id="order-B")

    assert result.discount_amount == Decimal("30.00")
    assert list(OrderCoupon.objects.order_by("id").values_list("order_id", "discount_amount")) == [
        ("order-A", Decimal("30.00")), ("order-B", Decimal("30.00")),
    ]
