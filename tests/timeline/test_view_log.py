"""What the view log records: every way a person reads a coupon, not only its full page."""

import pytest
from django.urls import reverse

from timeline.models import ViewRecord

pytestmark = pytest.mark.django_db


def recorded() -> list[tuple]:
    return list(ViewRecord.objects.order_by("pk").values_list("actor", "page", "coupon_id"))


def test_a_head_of_the_coupon_page_is_a_view(signed_in, coupon):
    answer = signed_in("support", "sam").head(reverse("console:coupon", args=[coupon.pk]))

    assert answer.status_code == 200
    assert recorded() == [("user:sam", "coupon", coupon.pk)]


@pytest.mark.parametrize(("part", "page"), [("console:coupon_timeline", "coupon-timeline"),
                                            ("console:coupon_ledger", "coupon-ledger")])
def test_the_htmx_timeline_and_ledger_pages_are_views(signed_in, coupon, part, page):
    client = signed_in("support", "sam")

    answer = client.get(reverse(part, args=[coupon.pk]), HTTP_HX_REQUEST="true")

    assert answer.status_code == 200
    assert recorded() == [("user:sam", page, coupon.pk)]


def test_an_api_read_with_a_console_session_is_a_view(signed_in, coupon):
    answer = signed_in("support", "sam").get(f"/api/v1/coupons/{coupon.pk}")

    assert answer.status_code == 200
    [(actor, page, coupon_id)] = recorded()
    assert (actor, coupon_id) == ("user:sam", coupon.pk)
    assert page.startswith("api:")


def test_a_service_clients_api_read_is_not_a_persons_view(api, coupon):
    assert api.get(f"/api/v1/coupons/{coupon.pk}").status_code == 200
    assert recorded() == []


def test_the_admin_change_page_of_a_coupon_is_a_view(client, coupon, django_user_model):
    client.force_login(django_user_model.objects.create_superuser("root", password="x" * 20))

    answer = client.get(reverse("admin:coupons_usercoupon_change", args=[coupon.pk]))

    assert answer.status_code == 200
    assert recorded() == [("user:root", "admin:coupons_usercoupon_change", coupon.pk)]
