"""The per-coupon check on a request reads a bounded tail, and still sees a rollback.

A history no signed head covers is read at most COUPON_CHECK_NEWEST_ROWS rows deep by the page
and GET /check, whatever its length: the answer says how far it is verified, and
`coupon_check --full` verifies the rest. A rollback of a coupon's newest rows past the
triggers (rows deleted, their journal entries left, the coupon set back) is named by the
journal's newest entries about the coupon (coupons/evidence/journal_tail.py).
"""

import io

import pytest
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from coupons.models import (
    CheckWatermark,
    CouponLock,
    CouponOperation,
    JournalEntry,
    OrderCoupon,
    Redemption,
)
from coupons.services import CommandContext, coupon_redeem
from tests.app_role import past_the_triggers
from tests.conftest import lock
from tests.signed_head import sign_head
from tests.timeline.history import bulk_history
from tests.zh_catalogue import compiled_catalogue, zh  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db
NEWEST = 200  # COUPON_CHECK_NEWEST_ROWS's default


@pytest.fixture
def uncovered(coupon, clock, api, tmp_path):
    """A head signed over the coupon's ISSUE and a check there (the watermark at v1); then
    `rows` - 1 more rows, which no head covers."""
    sign_head(tmp_path / "checkpoints")
    assert check(api, coupon)["complete"] is True

    def grow(rows: int):
        return bulk_history(coupon, clock, ledger_rows=rows)

    return grow


@pytest.fixture
def support(client, django_user_model):
    """The test client, signed in as a support person (the coupon page's reader)."""
    person = django_user_model.objects.create_user("support-1")
    person.groups.add(Group.objects.get(name="support"))
    client.force_login(person)
    return client


def check(api, coupon) -> dict:
    answer = api.get(f"/api/v1/coupons/{coupon.pk}/check")
    assert answer.status_code == 200
    return answer.json()


def check_command(coupon, *args) -> tuple[bool, str]:
    """(held, what `coupon_check` printed and raised)."""
    out = io.StringIO()
    try:
        call_command("coupon_check", str(coupon.pk), *args, stdout=out)
    except CommandError as failed:
        return False, f"{out.getvalue()}{failed}"
    return True, out.getvalue()


def problems(body: dict, number: int) -> list[str]:
    return next(item for item in body["invariants"] if item["number"] == number)["problems"]


def queries_of(client, path: str) -> int:
    """The queries of a second request (the first warms the service clients' cache)."""
    assert client.get(path).status_code == 200
    with CaptureQueriesContext(connection) as queries:
        assert client.get(path).status_code == 200
    return len(queries)


@pytest.mark.parametrize("rows", [1001, 3001])
def test_a_view_reads_the_newest_rows_of_an_uncovered_history_and_says_how_far_it_is_verified(
        coupon, uncovered, api, support, rows):
    coupon = uncovered(rows)
    read_from = rows - NEWEST + 1

    body = check(api, coupon)
    page = support.get(f"/coupons/{coupon.pk}/").content.decode()

    assert body["ok"] is True and body["complete"] is False
    assert (body["verified_up_to"], body["read_from_version"]) == (1, read_from)
    assert (body["replayed_state"], body["replayed_version"]) == ("AVAILABLE", rows)
    said = (f"Verified up to v1 and from v{read_from} on: this check read the newest ledger "
            f"rows, which no signed checkpoint covers yet; the {read_from - 2} between are "
            "verified by the background check (manage.py coupon_check --full)")
    assert any(note.startswith(said) for note in body["notes"]), body["notes"]
    assert said in page and "no invariant fails in the rows read" in page
    assert CheckWatermark.objects.get(coupon=coupon).through_version == 1


def test_the_bounded_view_costs_the_same_queries_at_1000_and_3000_uncovered_rows(
        coupon, clock, uncovered, api, support):
    client = support
    counts = []
    for rows in (1001, 3001):
        uncovered(rows)
        counts.append((queries_of(client, f"/coupons/{coupon.pk}/"),
                       queries_of(api, f"/api/v1/coupons/{coupon.pk}/check")))

    assert counts[0] == counts[1]
    assert counts[0][0] <= 24  # the coupon page's budget (tests/timeline/test_page_query_budget.py)


@pytest.mark.usefixtures("zh")
def test_the_page_says_it_in_chinese(coupon, uncovered, support):
    coupon = uncovered(1001)

    page = support.get(f"/coupons/{coupon.pk}/",
                                    HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

    assert "已核查至 v1，以及 v802 起的流水" in page
    assert "Verified up to" not in page


def test_the_full_check_verifies_what_the_view_left(coupon, uncovered, api,
                                                    broken_on_purpose):
    coupon = uncovered(1001)
    # A row in the part no view reads, rewritten past the triggers.
    deep = CouponOperation.objects.get(coupon=coupon, to_version=500)
    with past_the_triggers():
        CouponOperation.objects.filter(pk=deep.pk).update(reason="rewritten")
    broken_on_purpose.add(coupon.pk)

    body = check(api, coupon)
    held, said = check_command(coupon, "--full")

    assert body["ok"] is True and body["verified_up_to"] == 1
    assert not held
    row = CouponOperation._meta.verbose_name
    assert f'invariant 9: {row} {deep.pk}: reason is "rewritten"' in said


def test_once_a_head_covers_the_history_a_view_reads_it_once_and_moves_the_watermark(
        coupon, uncovered, api, tmp_path):
    coupon = uncovered(1001)
    assert check(api, coupon)["complete"] is False
    sign_head(tmp_path / "checkpoints")

    first, second = check(api, coupon), check(api, coupon)

    assert first["complete"] is True and first["verified_up_to"] is None
    assert first["ok"] is True and second["complete"] is True
    assert CheckWatermark.objects.get(coupon=coupon).through_version == 1001


def test_a_short_uncovered_tail_is_read_whole(coupon, uncovered, api):
    coupon = uncovered(NEWEST - 1)

    body = check(api, coupon)

    assert body["complete"] is True and body["verified_up_to"] is None
    assert (body["ok"], body["replayed_version"]) == (True, NEWEST - 1)


# --- a rollback of the newest rows -------------------------------------------------------


@pytest.fixture
def redeemed(coupon, ctx):
    """ISSUE, LOCK by order-A, REDEEM with pay-A: v3 USED."""
    _, proof = lock(coupon, ctx, order_id="order-A")
    coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id="pay-A",
                  ctx=CommandContext(actor="test"))
    coupon.refresh_from_db()
    return coupon


def roll_back(coupon) -> dict:
    """What the owner does with the triggers off: the lock and the redemption undone (ledger
    rows v2 and v3, the redemption, the order binding, the lease and the events deleted, the
    coupon back to AVAILABLE v1); their journal entries are left. {label: [row ids]}."""
    gone = {
        "coupons.couponoperation": list(CouponOperation.objects.filter(
            coupon=coupon, to_version__gt=1).values_list("pk", flat=True)),
        "coupons.redemption": list(Redemption.objects.filter(coupon=coupon)
                                   .values_list("pk", flat=True)),
        "coupons.ordercoupon": list(OrderCoupon.objects.filter(coupon=coupon)
                                    .values_list("pk", flat=True)),
    }
    with past_the_triggers(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM coupons_outboxevent WHERE operation_id = ANY(%s)",
                       [gone["coupons.couponoperation"]])
        Redemption.objects.filter(coupon=coupon).delete()
        OrderCoupon.objects.filter(coupon=coupon).delete()
        cursor.execute("DELETE FROM coupons_couponoperation WHERE id = ANY(%s)",
                       [gone["coupons.couponoperation"]])
        set_back(cursor, coupon)
        CouponLock.objects.filter(coupon=coupon).delete()
    return gone


def set_back(cursor, coupon) -> None:
    cursor.execute("UPDATE coupons_usercoupon SET state_version = 1, status = 'AVAILABLE', "
                   "current_lock_id = NULL, locked_order_id = NULL, lock_token_hash = NULL, "
                   "lock_expires_at = NULL WHERE id = %s", [coupon.pk])


def first_entry(label: str, pk: int) -> int:
    return JournalEntry.objects.get(subject=label, subject_id=pk, parent_hash__isnull=True).pk


def test_a_rollback_that_leaves_its_journal_entries_is_named_by_the_check_and_the_command(
        redeemed, api, support, broken_on_purpose):
    newest = CouponOperation.objects.get(coupon=redeemed, to_version=3)
    gone = roll_back(redeemed)
    broken_on_purpose.add(redeemed.pk)

    body = check(api, redeemed)
    page = support.get(f"/coupons/{redeemed.pk}/").content.decode()
    held, said = check_command(redeemed, "--full")

    assert body["ok"] is False and not held
    # Nothing but the journal tells: the rows left replay cleanly to AVAILABLE v1.
    assert [item["number"] for item in body["invariants"] if not item["ok"]] == [7, 9]
    missing = [(label, pk) for label, ids in gone.items() for pk in ids]
    assert len(missing) == 4
    for label, pk in missing:
        sentence = (f"journal entry {first_entry(label, pk)} records {label} {pk}, which is "
                    "gone (deleted past the services)")
        assert sentence in problems(body, 9)
        assert f"invariant 9: {sentence}" in said
        assert sentence in page
    behind = (f"journal entry {first_entry('coupons.couponoperation', newest.pk)} records "
              f"ledger row {newest.pk}, which leaves the coupon USED v3; the coupon row says "
              "AVAILABLE v1")
    assert problems(body, 7) == [behind]
    assert f"invariant 7: {behind}" in said and behind in page


def test_a_coupon_row_set_back_alone_is_named_by_the_check_and_the_command(
        redeemed, api, broken_on_purpose):
    newest = CouponOperation.objects.get(coupon=redeemed, to_version=3)
    with past_the_triggers(), connection.cursor() as cursor:
        set_back(cursor, redeemed)
    broken_on_purpose.add(redeemed.pk)

    body = check(api, redeemed)
    held, said = check_command(redeemed, "--full")

    behind = (f"journal entry {first_entry('coupons.couponoperation', newest.pk)} records "
              f"ledger row {newest.pk}, which leaves the coupon USED v3; the coupon row says "
              "AVAILABLE v1")
    assert behind in problems(body, 7)
    assert not held and f"invariant 7: {behind}" in said


def test_an_honest_history_has_nothing_in_its_journal_tail(redeemed, api):
    body = check(api, redeemed)

    assert body["ok"] is True and body["complete"] is True


def test_a_view_reads_only_the_newest_entries_and_the_full_check_all_of_them(
        redeemed, ctx, api, settings, broken_on_purpose):
    # Rows deleted under newer ones (a binding of the first lease), with the view's window
    # narrowed to the three newest entries: the view does not reach it, the full check does.
    first_binding = OrderCoupon.objects.get(coupon=redeemed)
    with past_the_triggers():
        OrderCoupon.objects.filter(pk=first_binding.pk).delete()
    broken_on_purpose.add(redeemed.pk)
    settings.COUPON_CHECK_NEWEST_ROWS = 2

    body = check(api, redeemed)
    held, said = check_command(redeemed, "--full")

    sentence = (f"journal entry {first_entry('coupons.ordercoupon', first_binding.pk)} records "
                f"coupons.ordercoupon {first_binding.pk}, which is gone")
    assert not any(sentence in problem for problem in problems(body, 9))
    assert not held and sentence in said
