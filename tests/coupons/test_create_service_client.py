"""`create_service_client NAME --allow ... --facts ...`: a client holds only what it was given."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from coupons.capabilities import CLIENT_GRANTS, Capability
from coupons.models import FactType, ServiceClient
from coupons.write.tokens import hash_token

pytestmark = pytest.mark.django_db


def create(*args) -> list[str]:
    out = StringIO()
    call_command("create_service_client", *args, stdout=out)
    return out.getvalue().splitlines()


def test_allow_all_grants_every_client_capability_and_fact_type(clock):
    lines = create("demo", "--allow", "all", "--facts", "all")

    client = ServiceClient.objects.get(name="demo")
    assert sorted(client.capabilities) == sorted(c.value for c in CLIENT_GRANTS.values())
    assert sorted(client.fact_types) == sorted(FactType.values)
    # people's decisions are never a machine's
    assert Capability.RESOLVE_CASES not in client.capabilities
    assert Capability.APPROVE_REFUNDS not in client.capabilities
    assert client.key_hash == hash_token(lines[-1])


def test_a_list_grants_exactly_those(clock):
    lines = create("orders", "--allow", "lock, redeem,release", "--facts", "PaymentSucceeded")

    client = ServiceClient.objects.get(name="orders")
    assert sorted(client.capabilities) == sorted(
        [Capability.LOCK, Capability.REDEEM, Capability.RELEASE])
    assert client.fact_types == ["PaymentSucceeded"]
    assert "Allowed: lock_coupon, redeem_coupon, release_coupon; facts: PaymentSucceeded." in lines


def test_the_printed_key_authenticates_only_for_what_was_granted(clock, coupon):
    key = create("reader", "--allow", "read")[-1]
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")

    assert api.get(f"/api/v1/coupons/{coupon.pk}").status_code == 200
    refused = api.post(f"/api/v1/coupons/{coupon.pk}/void", {"expected_version": 1, "reason": "x"},
                       format="json", HTTP_IDEMPOTENCY_KEY="k1")
    assert refused.status_code == 403
    assert refused.json()["error"]["details"]["capability"] == Capability.VOID


@pytest.mark.parametrize(("args", "unknown"), [
    (["--allow", "lock,approve_refunds"], "Unknown capability: approve_refunds."),
    (["--allow", "everything"], "Unknown capability: everything."),
    (["--facts", "PaymentSucceeded,CouponStolen"], "Unknown fact type: CouponStolen."),
])
def test_an_unknown_name_is_an_error_and_creates_nothing(clock, args, unknown):
    with pytest.raises(CommandError, match=unknown):
        create("typo", *args)

    assert not ServiceClient.objects.exists()


def test_by_default_a_client_may_do_nothing_and_is_told_so(clock):
    lines = create("bare")

    client = ServiceClient.objects.get(name="bare")
    assert (client.capabilities, client.fact_types) == ([], [])
    assert lines[0].startswith("This client may do nothing yet: give it --allow and/or --facts")
    assert client.key_hash == hash_token(lines[-1])


def test_a_taken_name_is_an_error(clock):
    create("orders", "--allow", "lock")

    with pytest.raises(CommandError, match="A client named 'orders' exists."):
        create("orders", "--allow", "all")

    assert ServiceClient.objects.get().capabilities == [Capability.LOCK]
