"""The template admin: adding and changing a template go through coupons.services.templates,
each save a new frozen CouponTemplateVersion (both answered 500 before)."""

from decimal import Decimal

import pytest

from coupons.models import CouponTemplate, CouponTemplateVersion, UserCoupon
from coupons.services import coupon_issue, template_create
from tests.conftest import START

pytestmark = pytest.mark.django_db

ADD_URL = "/admin/coupons/coupontemplate/add/"
FORM = {
    "name": "10 off", "kind": "AMOUNT_OFF", "face_value": "10.00", "percent_off": "",
    "max_discount": "", "min_order_amount": "50.00", "valid_from_0": "", "valid_from_1": "",
    "valid_until_0": "", "valid_until_1": "", "valid_days": "7", "returnable": "on",
    "expiry_during_lock": "LOCK_HONORS",
}


def change_url(template):
    return f"/admin/coupons/coupontemplate/{template.pk}/change/"


@pytest.fixture
def admin_client(client, django_user_model, clock):
    client.force_login(django_user_model.objects.create_superuser("root", password="pw-123456"))
    return client


def frozen_versions(template):
    return list(CouponTemplateVersion.objects.filter(template=template).order_by("version")
                .values_list("version", "face_value", "min_order_amount"))


def test_adding_a_template_in_the_admin_freezes_version_one(admin_client):
    response = admin_client.post(ADD_URL, {**FORM, "code": "off10"})

    assert response.status_code == 302, response.content
    template = CouponTemplate.objects.get(code="off10")
    assert (template.version, template.created_at) == (1, START)
    assert frozen_versions(template) == [(1, Decimal("10.00"), Decimal("50.00"))]


def test_changing_a_template_in_the_admin_makes_a_new_version(admin_client, ctx, clock):
    template = template_create(code="off10", name="10 off", kind="AMOUNT_OFF",
                               face_value=Decimal("10.00"), min_order_amount=Decimal("50.00"),
                               valid_days=7)
    issued = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
    clock.advance(days=1)

    response = admin_client.post(change_url(template), {**FORM, "face_value": "12.00"})

    assert response.status_code == 302, response.content
    template.refresh_from_db()
    assert (template.version, template.face_value) == (2, Decimal("12.00"))
    assert frozen_versions(template) == [
        (1, Decimal("10.00"), Decimal("50.00")), (2, Decimal("12.00"), Decimal("50.00")),
    ]
    assert UserCoupon.objects.get(pk=issued.pk).template_version.version == 1
    # A second edit from the same page is the third version.
    admin_client.post(change_url(template), {**FORM, "face_value": "12.00",
                                             "min_order_amount": "60.00"})
    template.refresh_from_db()
    assert template.version == 3


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        pytest.param({"kind": "PERCENT_OFF"}, "percent_off", id="percent-without-percent"),
        pytest.param({"valid_days": ""}, "valid_until", id="no-validity"),
        pytest.param({"valid_until_0": "2026-07-01", "valid_until_1": "00:00:00"},
                     "valid_until", id="window-and-days"),
    ],
)
def test_terms_that_cannot_price_an_order_are_shown_beside_their_field(
    admin_client, changes, field
):
    response = admin_client.post(ADD_URL, {**FORM, "code": "off10", **changes})

    assert response.status_code == 200
    assert field in response.context["adminform"].form.errors
    assert not CouponTemplate.objects.exists()
    assert not CouponTemplateVersion.objects.exists()


def test_a_taken_code_is_a_form_error(admin_client):
    admin_client.post(ADD_URL, {**FORM, "code": "off10"})

    response = admin_client.post(ADD_URL, {**FORM, "code": "off10", "name": "another"})

    assert response.status_code == 200
    assert "code" in response.context["adminform"].form.errors
    assert CouponTemplate.objects.get().name == "10 off"


def test_an_invalid_change_keeps_the_template_as_it_was(admin_client):
    admin_client.post(ADD_URL, {**FORM, "code": "off10"})
    template = CouponTemplate.objects.get()

    response = admin_client.post(change_url(template), {**FORM, "face_value": ""})

    assert response.status_code == 200
    assert "face_value" in response.context["adminform"].form.errors
    template.refresh_from_db()
    assert (template.version, template.face_value) == (1, Decimal("10.00"))
    assert len(frozen_versions(template)) == 1
