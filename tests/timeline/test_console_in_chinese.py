"""The console's own words (timeline/) in Simplified Chinese: navigation, search, queues,
policy words and messages, read under Accept-Language zh-hans, and the catalogue entries of
timeline/ all translated. English stays the default (the other console tests read it)."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from django.conf import settings
from django.test import override_settings
from django.urls import reverse
from django.utils import translation

from coupons.services import coupon_issue
from refunds.models import ReturnPolicy
from refunds.services.policies import policy_draft_create, policy_draft_update
from tests.timeline.queue_helpers import press, text
from tests.timeline.queue_objects import late_payment_case
from timeline.policy_words import conditions_in_words

pytestmark = pytest.mark.django_db

CATALOGUE = Path(settings.BASE_DIR) / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"


@pytest.fixture(scope="module")
def compiled_locale(tmp_path_factory):
    """The catalogue as it is now, compiled apart from any stale .mo in the tree."""
    msgfmt = shutil.which("msgfmt")
    assert msgfmt, "gettext's msgfmt is needed to compile the zh_Hans catalogue"
    root = tmp_path_factory.mktemp("locale")
    target = root / "zh_Hans" / "LC_MESSAGES"
    target.mkdir(parents=True)
    subprocess.run([msgfmt, "--check", "-o", str(target / "django.mo"), str(CATALOGUE)],
                   check=True)
    return root


@pytest.fixture
def chinese(compiled_locale, client):
    # Every request says Accept-Language: zh-hans, what LocaleMiddleware reads; the override
    # makes the same language active where no middleware picks one.
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "zh-hans"
    with override_settings(LOCALE_PATHS=[compiled_locale]), translation.override("zh-hans"):
        yield


def test_the_navigation_and_the_search_form_read_in_chinese(signed_in, chinese):
    page = text(signed_in("operator").get(reverse("console:search")))

    for words in ("概览", "搜索", "冲突工单", "待审批", "对账", "任意状态", "任意有效期",
                  "有未处理的冲突工单"):
        assert words in page
    assert ">Dashboard<" not in page and "Any status" not in page


def test_search_says_how_each_coupon_matched_in_chinese(signed_in, chinese, coupon, template,
                                                        ctx):
    coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx)

    page = text(signed_in("support").get(reverse("console:search"), {"q": "u1"}))

    assert page.count('<td class="matched">用户 ID <code><mark>u1</mark></code></td>') == 2
    assert "user id" not in page


def test_a_page_past_the_end_is_refused_in_chinese(signed_in, chinese, coupon, template, ctx):
    coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx)

    answer = signed_in("support").get(reverse("console:search"), {"q": "u1", "page": 9})

    assert answer.status_code == 404
    assert "没有第 9 页：列表共 1 页。" in text(answer)


def test_the_case_queue_filters_form_and_outcome_read_in_chinese(signed_in, chinese, coupon):
    case = late_payment_case(coupon)
    client = signed_in("operator")

    page = text(client.get(reverse("console:cases")))
    assert all(words in page for words in ("全部", "未处理", "已处理", "按建议处理", "原因"))

    answer = press(client, "case_resolve", case_id=case.pk, action="RESOLVE", note="已电话确认")
    assert f"冲突工单 #{case.pk} 已处理：" in text(answer)


def test_a_queue_action_without_confirmation_asks_in_chinese(signed_in, chinese, coupon):
    case = late_payment_case(coupon)

    answer = press(signed_in("operator"), "case_resolve", htmx=False, confirmed=False,
                   case_id=case.pk, action="DISMISS", note="重复工单")

    assert "处理冲突工单" in text(answer)


def test_policy_rules_and_their_diff_read_in_chinese(signed_in, chinese, clock):
    default = ReturnPolicy.objects.get(code="default")
    draft = policy_draft_create(default, "user:pat")
    rules = [dict(rule) for rule in draft.rules]
    rules.insert(len(rules) - 1, {"label": "Closed campaigns get a credit",
                                  "when": {"campaign_closed": True},
                                  "action": "COMPENSATE", "compensation": {"amount": "5.00"}})
    policy_draft_update(draft, rules, "user:pat")
    admin = signed_in("policy_admin", "pat")

    diff = text(admin.get(reverse("console:policy_diff", kwargs={"policy_id": default.pk}),
                          {"from": 1, "to": 2}))
    assert "活动已结束" in diff and "券保持已使用，并补偿 ¥5.00" in diff
    assert '<span class="badge">新增</span>' in diff and '<span class="badge">未变</span>' in diff

    editor = text(admin.get(reverse("console:policy_version_edit",
                                    kwargs={"policy_id": default.pk, "number": draft.number}),
                            ))
    assert "退款类型" in editor and "需运营先批准" in editor


def test_the_policy_sentences_word_the_refund_type_and_count_days(chinese):
    words = conditions_in_words({"when": {"refund_type": "FULL", "days_since_redemption_max": 1,
                                          "template_kind": ["CASH", "DISCOUNT"]}})

    assert words == ["退款类型为 全额", "核销未超过 1 天", "券类型为 CASH 或 DISCOUNT"]


def test_english_stays_the_default_without_a_chosen_language(compiled_locale):
    with override_settings(LOCALE_PATHS=[compiled_locale]):
        words = conditions_in_words({"when": {"days_since_redemption_min": 1,
                                              "coupon_expired": True}})

    assert words == ["redeemed at least 1 day ago", "the coupon is past its validity"]


def console_entries(po: str) -> list[tuple[str, str, bool]]:
    """(msgid, msgstr[0] or msgstr, fuzzy) of every entry whose references are all timeline/."""
    entries = []
    for block in po.split("\n\n"):
        references = re.findall(r"^#: (.*)$", block, re.M)
        files = {ref.rsplit(":", 1)[0] for line in references for ref in line.split()}
        if not files or not all(f.startswith("timeline/") for f in files):
            continue
        msgid = "".join(re.findall(r'"(.*)"', block.split("msgid ", 1)[1].split("\nmsgstr")[0]
                                   .split("\nmsgid_plural")[0]))
        msgstr = "".join(re.findall(r'"(.*)"', re.split(r"\nmsgstr(?:\[0\])? ", block)[1]
                                    .split("\nmsgstr[")[0]))
        entries.append((msgid, msgstr, "#, fuzzy" in block or "fuzzy," in block))
    return entries


def test_every_console_entry_of_the_catalogue_is_translated():
    entries = console_entries(CATALOGUE.read_text(encoding="utf-8"))

    assert len(entries) > 100
    assert [msgid for msgid, msgstr, fuzzy in entries if fuzzy or not msgstr] == []


def test_the_catalogue_check_catches_an_empty_or_fuzzy_entry():
    po = ('#: timeline/navigation.py:19\nmsgid "Dashboard"\nmsgstr ""\n\n'
          '#: timeline/search.py:40\n#, fuzzy\nmsgid "user id"\nmsgstr "用户 ID"\n\n'
          '#: coupons/errors.py:3\nmsgid "Elsewhere"\nmsgstr ""')

    assert console_entries(po) == [("Dashboard", "", False), ("user id", "用户 ID", True)]
