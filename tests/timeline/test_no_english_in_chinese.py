"""Every console page read in Chinese shows no English word and no bare code: a key, a fact's
name or an enum code is shown as a word with the code beside it in a badge.

Rendered through the test client with the Chinese language and data of every kind (the
late-payment incident, a case settled by an operator, refund decisions waiting and decided, a
compensation proposed); the text outside badges, codes and other-language elements (the English
reply, the language switch) is checked (tests/timeline/page_text.py). What may stay is in
ALLOWED, with the reason.
"""

from decimal import Decimal

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from coupons.models import ConflictCase
from refunds.models import ReturnPolicy
from refunds.services import refund_receive
from tests.browser.chinese_words import english_in
from tests.conftest import lock
from tests.timeline.incident import incident_coupon
from tests.timeline.page_text import bare_codes, shown_text
from tests.timeline.queue_objects import SYSTEM, fresh_coupon, pending_decision, proposal, redeemed
from tests.zh_catalogue import compiled_catalogue  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db

# Latin a Chinese reader is expected to read, each for a reason.
ALLOWED = {
    "ID": "the abbreviation Chinese support writes too (订单 ID)",
    "CSV": "a file format's name",
    "UTC": "the time zone's name (UTC+8)",
    "API": "the interface's name, as engineers and support say it",
    "HTTP": "a protocol's name (the Idempotency-Key header)",
}


# Names the test's data gives people, templates and the shipped policy (names and codes stay as
# written), and the English text a service stored without a message code.
TYPED = ("olga", "test", "migration", "default", "30 off 200", "redeemed by mistake")
# The time-zone page lists IANA zone names: ids, as every system writes them.
ZONE_PAGE = "/time-zone/"


@pytest.fixture(autouse=True)
def chinese(compiled_catalogue, settings, client):  # noqa: F811 (the fixture imported above)
    settings.LOCALE_PATHS = [str(compiled_catalogue)]
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "zh-hans"


@pytest.fixture
def everyone(make_person, client):
    """A person in every console group, so every page and every form shows."""
    person = make_person("operator", "olga")
    person.groups.add(*Group.objects.filter(name__in=("support", "policy_admin")))
    client.force_login(person)
    return client


@pytest.fixture
def history(template, clock, send, ctx):
    """Coupons with every kind of timeline entry and queue item."""
    incident = incident_coupon(template, clock)
    settled = fresh_coupon(template, "u2")
    lock(settled, ctx, order_id="A")
    send("OrderClosed", order_id="A")
    lock(settled, ctx, order_id="B")
    send("PaymentSucceeded", order_id="A", payment_id="P-A")
    waiting = pending_decision(fresh_coupon(template, "u3"))
    partly = fresh_coupon(template, "u4")
    redeemed(partly, "order-P")
    refund_receive(refund_id="refund-P", order_id="order-P", payment_id="pay-order-P",
                   refund_amount=Decimal("10.00"), refund_type="PARTIAL", ctx=SYSTEM)
    proposed = proposal(fresh_coupon(template, "u5"))
    fresh_coupon(template, "u2")  # two coupons: search lists them instead of opening one
    return {"coupons": [incident, settled, waiting.coupon, partly, proposed.coupon]}


def pages(history) -> list[str]:
    policy = ReturnPolicy.objects.get(code=ReturnPolicy.DEFAULT_CODE)
    return [
        reverse("console:home"),
        reverse("console:search") + "?q=u2",
        *(reverse("console:coupon", args=[coupon.pk]) for coupon in history["coupons"]),
        reverse("console:cases"), reverse("console:cases") + "?status=resolved",
        reverse("console:approvals"), reverse("console:approvals") + "?status=decided",
        reverse("console:compensations"),
        reverse("console:policies"), reverse("console:policy", args=[policy.pk]),
        reverse("console:policy_version", args=[policy.pk, 1]),
        reverse("console:activity"), reverse("console:reconciliation"),
        reverse("console:time_zone"),
    ]


def test_no_page_shows_an_english_word_or_a_bare_code_in_chinese(everyone, history):
    assert ConflictCase.objects.exists()
    found = {}
    for url in pages(history):
        answer = everyone.get(url)
        assert answer.status_code == 200, url
        texts = shown_text(answer.content.decode())
        if url == ZONE_PAGE:
            texts = [(text, where) for text, where in texts if where != "option"]
        problems = english_in(texts, TYPED) + bare_codes(texts, allowed=set(ALLOWED))
        if problems:
            found[url] = sorted(set(problems))
    assert found == {}, "\n".join(f"{url}: {words}" for url, words in found.items())


def test_the_check_finds_english_and_codes_outside_badges_but_not_inside():
    html = ('<html><body><p>退款决策：KEEP_USED</p><p><span class="muted">occurred_at</span> '
            'PaymentSucceeded</p><p>保持已使用 <span class="code-badge"><abbr title="t">'
            'KEEP_USED</abbr></span></p><p lang="en">Hello!</p><button>Approve</button>'
            '<p>订单 order_demo_A</p></body></html>')

    texts = shown_text(html)

    assert english_in(texts) == ["Approve (button)"]
    assert bare_codes(texts) == ["KEEP_USED (p)", "occurred_at (span.muted)",
                                 "PaymentSucceeded (p)"]
