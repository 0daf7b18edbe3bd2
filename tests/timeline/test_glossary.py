"""The domain's words come from one place (console.glossary), in the glossary's Chinese, with
the code beside them in a badge; no page or catalogue entry drifts to other words."""

import re
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils import translation

from coupons.capabilities import Capability
from tests.timeline.incident import incident_coupon
from tests.timeline.queue_objects import fresh_coupon, late_payment_case
from tests.zh_catalogue import compiled_catalogue, zh  # noqa: F401 (fixtures)
from timeline import glossary
from timeline.policy_forms import RuleForm

ROOT = Path(__file__).resolve().parents[2]
CATALOGUE = ROOT / "locale/zh_Hans/LC_MESSAGES/django.po"
GLOSSARY = ROOT / "locale/zh_Hans/glossary.md"
CHINESE = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}
# Words that are not the glossary's, and the glossary's word to use instead.
NOT_OURS = {"退货政策": "退券规则", "冲正": "撤销"}
STATE_WORDS = {"AVAILABLE": "待使用", "LOCKED": "锁定中", "USED": "已核销", "EXPIRED": "已失效",
               "VOID": "已作废"}
OPERATION_WORDS = {"ISSUE": "发券", "LOCK": "锁券", "RENEW": "续租", "REDEEM": "核销",
                   "RELEASE": "释放", "EXPIRE": "过期", "VOID": "作废", "RETURN": "退券",
                   "REVERSE": "撤销", "COMPENSATE": "补偿"}


def test_the_catalogue_never_uses_words_the_glossary_replaced():
    translated = "\n".join(re.findall(r'^msgstr(?:\[\d\])? (".*")$', CATALOGUE.read_text(),
                                      re.M))
    for wrong, right in NOT_OURS.items():
        assert wrong not in translated, f"{wrong}: the glossary says {right}"


def test_states_and_operations_read_as_the_glossary_says(zh):  # noqa: F811
    assert {code: str(word) for code, (word, _) in glossary.STATES.items()} == STATE_WORDS
    assert {code: str(word) for code, (word, _) in glossary.OPERATIONS.items()} == \
        OPERATION_WORDS
    table = GLOSSARY.read_text()
    for word in [*STATE_WORDS.values(), *OPERATION_WORDS.values()]:
        assert word in table


def test_every_capability_has_words():
    assert set(glossary.CAPABILITIES) == set(Capability)


@pytest.mark.django_db
def test_the_coupon_page_in_chinese_says_states_and_operations_with_their_codes(
        zh, signed_in, template, clock):  # noqa: F811
    coupon = incident_coupon(template, clock)

    page = signed_in("support").get(reverse("console:coupon", args=[coupon.pk]),
                                    **CHINESE).content.decode()

    assert re.search(r'已核销 <span class="badge badge-used"><abbr title="[^"]+">USED</abbr>', page)
    ledger = page.split('id="ledger"')[1]
    assert re.search(r'核销 <span class="code-badge"><abbr title="[^"]+">REDEEM</abbr>', ledger)
    assert re.search(r'锁定中 <span class="code-badge"><abbr title="[^"]+">LOCKED</abbr></span>'
                     r'→已核销', page)  # the timeline's title
    for wrong in NOT_OURS:
        assert wrong not in page


@pytest.mark.django_db
def test_filters_checkboxes_activity_and_the_403_page_are_chinese(
        zh, signed_in, template, client):  # noqa: F811
    late_payment_case(fresh_coupon(template))
    support = signed_in("support")

    search = support.get(reverse("console:search"), **CHINESE).content.decode()
    assert '<option value="USED">已核销 (USED)</option>' in search
    denied = support.get(reverse("console:compensation_propose"), **CHINESE).content.decode()
    assert "需要<strong>提议补偿</strong>" in denied.replace(" ", "")
    assert "Propose compensations" not in denied

    kinds = dict(RuleForm().fields["template_kind"].choices)  # the policy editor's checkboxes
    assert str(kinds["AMOUNT_OFF"]) == "满减券 (AMOUNT_OFF)"

    operator = signed_in("operator", "olga")
    operator.get("/cases/", **CHINESE)
    activity = operator.get(reverse("console:activity"), **CHINESE).content.decode()
    assert "打开了 冲突工单" in activity and "打开了 cases" not in activity


@pytest.mark.django_db
def test_the_sign_in_page_switches_language_before_anyone_signs_in(
        zh, client):  # noqa: F811
    with translation.override("en"):
        page = client.get(reverse("console:login")).content.decode()
    assert 'name="language" value="zh-hans"' in page and 'action="/login/language"' in page

    switched = client.post(reverse("console:login_language"),
                           {"language": "zh-hans", "next": "/login/"})

    assert (switched.status_code, switched["Location"]) == (302, "/login/")
    assert "登录" in client.get("/login/").content.decode()
    assert client.post(reverse("console:login_language"), {"language": "xx"}).status_code == 400
    away = client.post(reverse("console:login_language"),
                       {"language": "en", "next": "https://elsewhere.example/"})
    assert away["Location"] == "/"
