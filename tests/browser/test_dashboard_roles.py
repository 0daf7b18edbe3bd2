"""The dashboard raises no alarm a reader cannot act on, in both languages.

Support sees no outbox card and no manage.py command in an empty state; an operator in the
demo is told plainly that no relay runs there, instead of an alarm."""

import pytest
from playwright.sync_api import expect

from tests.browser.accessibility import axe_violations
from tests.browser.conftest import sign_in
from tests.browser.test_chinese import switch_to_chinese
from tests.timeline.queue_objects import fresh_coupon

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_support_sees_no_outbox_alarm_and_no_commands(page, person, template):
    fresh_coupon(template)  # one event waits in the outbox
    person("support", "sam")
    sign_in(page, "sam")

    expect(page.locator("#outbox")).to_have_count(0)
    expect(page.locator("main")).not_to_contain_text("manage.py")
    assert axe_violations(page) == []
    switch_to_chinese(page)
    expect(page.locator("#outbox")).to_have_count(0)
    expect(page.locator("main")).not_to_contain_text("manage.py")
    assert axe_violations(page) == []
