"""The console in the reader's language: Accept-Language by default, the header's switch,
remembered per user and applied at sign-in; money and the API follow the same language."""

from decimal import Decimal

import pytest
from django.conf import settings
from django.test import Client
from django.utils import translation

from timeline.models import ConsolePreference
from timeline.templatetags.console import money

pytestmark = pytest.mark.django_db

COOKIE = settings.LANGUAGE_COOKIE_NAME


def test_the_console_speaks_english_by_default(signed_in):
    html = signed_in("support").get("/").content.decode()
    assert '<html lang="en" dir="ltr"' in html
    assert "Sign out" in html
    assert ('value="zh-hans" lang="zh-hans" title="Show the console in Simplified Chinese">'
            '简体中文</button>') in html


def test_accept_language_picks_chinese(signed_in):
    html = signed_in("support").get("/", HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9").content.decode()
    assert '<html lang="zh-hans" dir="ltr"' in html
    assert "退出登录" in html and "优惠券控制台" in html and 'aria-label="按任意 ID 搜索"' in html
    assert 'value="en" lang="en" title="将控制台切换为英语">English</button>' in html


def test_the_switch_remembers_the_choice_and_goes_back(signed_in):
    client = signed_in("operator")
    answer = client.post("/language/", {"language": "zh-hans", "next": "/cases/?page=2"})
    assert answer.status_code == 302 and answer["Location"] == "/cases/?page=2"
    assert answer.cookies[COOKIE].value == "zh-hans"
    assert ConsolePreference.objects.get().language == "zh-hans"
    # The browser's own wish now loses to the person's choice.
    assert "退出登录" in client.get("/", HTTP_ACCEPT_LANGUAGE="en").content.decode()


def test_a_new_browser_gets_the_remembered_language_at_sign_in(make_person):
    person = make_person("support", "sun")
    person.set_password("a-long-password-1")
    person.save()
    first = Client()
    first.force_login(person)
    first.post("/language/", {"language": "zh-hans", "next": "/"})

    fresh = Client()  # another browser: no language cookie, no session
    answer = fresh.post("/login/", {"username": "sun", "password": "a-long-password-1"})
    assert answer.status_code == 302
    assert answer.cookies[COOKIE].value == "zh-hans"
    assert "退出登录" in fresh.get("/").content.decode()


def test_a_session_without_the_cookie_still_gets_the_remembered_language(make_person):
    person = make_person("support", "li")
    ConsolePreference.objects.create(user=person, language="zh-hans",
                                     updated_at="2026-01-01T00:00:00Z")
    client = Client()
    client.force_login(person)  # the sign-in keeps the choice in the session
    client.cookies.pop(COOKIE, None)
    answer = client.get("/")
    assert "退出登录" in answer.content.decode()
    assert answer.cookies[COOKIE].value == "zh-hans"


@pytest.mark.parametrize("language", ["", "fr", "zh-hans'><script>"])
def test_an_unknown_language_is_refused_and_nothing_is_stored(signed_in, language):
    answer = signed_in("support").post("/language/", {"language": language})
    assert answer.status_code == 400
    assert "Choose one of the console's languages." in answer.content.decode()
    assert not ConsolePreference.objects.exists()
    assert COOKIE not in answer.cookies


def test_the_refusal_reads_in_chinese(signed_in):
    answer = signed_in("support").post("/language/", {"language": "fr"},
                                       HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert answer.content.decode() == "请选择控制台支持的语言。"


@pytest.mark.parametrize("back", ["https://evil.example/", "//evil.example/", ""])
def test_the_switch_never_sends_anyone_off_site(signed_in, back):
    answer = signed_in("support").post("/language/", {"language": "en", "next": back})
    assert answer["Location"] == "/"


def test_signed_out_the_switch_goes_to_sign_in(client):
    answer = client.post("/language/", {"language": "zh-hans"})
    assert answer.status_code == 302 and answer["Location"].startswith("/login/")
    assert not ConsolePreference.objects.exists()


def test_each_person_keeps_their_own_language(make_person):
    chen, olga = make_person("support", "chen"), make_person("operator", "olga")
    for person, language in ((chen, "zh-hans"), (olga, "en")):
        client = Client()
        client.force_login(person)
        client.post("/language/", {"language": language})
    assert dict(ConsolePreference.objects.values_list("user__username", "language")) == {
        "chen": "zh-hans", "olga": "en"}


def test_money_keeps_currency_and_two_places_in_each_language():
    with translation.override("en"):
        assert money(Decimal("12345.5")) == "¥12,345.50"
        assert money(Decimal("-3")) == "-¥3.00"
    with translation.override("zh-hans"):
        # Django's zh_Hans formats write no thousands separator.
        assert money(Decimal("12345.5")) == "¥12345.50"
        assert money("0.1") == "¥0.10"


def test_the_api_answers_in_the_asked_language_and_keeps_its_codes(api):
    answer = api.get("/api/v1/coupons/999999", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert answer.status_code == 404
    assert answer["Content-Language"] == "zh-hans"
    assert answer.json()["error"]["code"] == "NOT_FOUND"
    assert "Accept-Language" in answer["Vary"]
    assert api.get("/api/v1/coupons/999999")["Content-Language"] == "en"
