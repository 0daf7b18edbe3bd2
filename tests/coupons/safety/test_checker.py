"""The per-coupon check fires on a coupon broken against each invariant (docs/design.md).

The after-test check in tests/conftest.py, the permutation walk, the state machine and the race
tests all trust `coupon_check(...).ok`; these tests are what shows that trust is earned.
"""

import re

import pytest

from coupons.evidence.replay import INVARIANTS, coupon_check
from coupons.models import UserCoupon
from tests.conftest import assert_check_is_alive, unreplayable
from tests.coupons.safety import breakage

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("breakage_case", "invariant", "problem", "also"),
    breakage.CASES,
    ids=[f"inv{case[1]}-{case[0].__name__}" for case in breakage.CASES],
)
def test_check_names_the_invariant_a_broken_coupon_violates(
    breakage_case, invariant, problem, also, template, ctx, broken_on_purpose,
):
    coupon = breakage_case(template, ctx)
    broken_on_purpose.add(coupon.pk)

    report = coupon_check(breakage.fresh(coupon))

    assert report.ok is False
    assert report.coupon_id == coupon.pk
    assert set(report.violations) == {invariant} | also
    assert any(re.fullmatch(problem, found) for found in report.violations[invariant]), (
        report.violations)


def test_every_invariant_has_a_broken_case():
    assert {case[1] for case in breakage.CASES} == set(INVARIANTS)


def test_report_lists_each_invariant_with_its_problems(template, ctx, broken_on_purpose):
    coupon = breakage.version_jump(template, ctx)
    broken_on_purpose.add(coupon.pk)

    body = coupon_check(breakage.fresh(coupon)).as_dict()

    assert (body["coupon_id"], body["ok"]) == (coupon.pk, False)
    assert (body["replayed_state"], body["replayed_version"]) == ("LOCKED", 4)
    failing = [(i["number"], i["ok"]) for i in body["invariants"] if not i["ok"]]
    assert failing == [(4, False)]
    [gap] = [i for i in body["invariants"] if i["number"] == 4]
    assert gap["rule"] == INVARIANTS[4]
    assert gap["problems"] == ["RENEW v2→v4 does not raise the version by exactly one"]
    assert all(i["problems"] == [] for i in body["invariants"] if i["number"] != 4)


def test_check_endpoint_tells_support_a_broken_coupon_is_broken(
    api, template, ctx, broken_on_purpose,
):
    coupon = breakage.state_changed_without_ledger_row(template, ctx)
    broken_on_purpose.add(coupon.pk)

    response = api.get(f"/api/v1/coupons/{coupon.pk}/check")

    assert response.status_code == 200
    body = response.json()
    assert (body["ok"], body["replayed_state"], body["replayed_version"]) == (False, "AVAILABLE", 1)
    assert [i["number"] for i in body["invariants"] if not i["ok"]] == [7]


def test_return_that_names_its_redemption_passes_the_check(template, ctx):
    coupon = breakage.honest_return(template, ctx)

    report = coupon_check(breakage.fresh(coupon))

    assert report.ok, report.violations
    assert (report.replayed_state, report.replayed_version) == ("AVAILABLE", 4)


def test_honest_history_of_every_command_passes_the_check(template, ctx):
    locked_over, _ = breakage.taken_over(template, ctx)
    used = breakage.redeemed(template, ctx)

    assert unreplayable(UserCoupon.objects.filter(pk__in=[locked_over.pk, used.pk])) == {}


# --- the after-test check itself ----------------------------------------------------------


def test_after_test_check_would_fail_on_a_broken_coupon(template, ctx, broken_on_purpose):
    """What tests/conftest.py asserts after every test, run here on a coupon broken on purpose:
    it is reported, and only it."""
    clean = breakage.issued(template, ctx)
    broken = breakage.version_bumped_without_ledger_row(template, ctx)
    broken_on_purpose.add(broken.pk)

    failures = unreplayable(UserCoupon.objects.all())

    assert set(failures) == {broken.pk}
    assert clean.pk not in failures
    assert set(failures[broken.pk]) == {7}


def test_after_test_check_proves_it_is_alive_before_trusting_a_clean_database():
    assert_check_is_alive()  # no database rows needed: the phantom coupon is never saved


def test_alive_check_fails_when_the_checker_passes_everything(monkeypatch):
    with monkeypatch.context() as patched, pytest.raises(AssertionError, match="cannot fail"):
        patched.setattr("coupons.evidence.replay.CheckReport.ok", property(lambda report: True))
        assert_check_is_alive()
