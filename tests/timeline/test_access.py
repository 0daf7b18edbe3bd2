"""Signing in to the console, and what happens to those who may not open a page."""

import pytest
from django.http import HttpResponse
from django.urls import reverse

from coupons.capabilities import Capability
from coupons.models import CommandRejection
from timeline.views.access import ConsolePage

pytestmark = pytest.mark.django_db


def test_anonymous_visitor_goes_to_the_console_sign_in_page(client):
    answer = client.get("/")
    assert answer.status_code == 302
    assert answer["Location"] == f"{reverse('console:login')}?next=/"


def test_sign_in_page_signs_in_and_returns_to_the_page_asked_for(client, make_person):
    person = make_person("support", "sam")
    person.set_password("a long demo password")
    person.save()
    page = client.get(reverse("console:login"), {"next": "/"})
    assert b"Sign in" in page.content

    answer = client.post(reverse("console:login"), {
        "username": "sam", "password": "a long demo password", "next": "/"}, REMOTE_ADDR="10.0.0.1")
    assert answer.status_code == 302 and answer["Location"] == "/"
    assert client.get("/").status_code == 200


def test_wrong_password_says_so_and_signs_nobody_in(client, make_person):
    make_person("support", "sam")
    answer = client.post(reverse("console:login"), {"username": "sam", "password": "nope"})
    assert answer.status_code == 200
    assert b"correct username and password" in answer.content
    assert client.get("/").status_code == 302


def test_an_htmx_action_after_the_session_ran_out_sends_the_page_to_sign_in(client):
    answer = client.post(reverse("console:approvals"), HTTP_HX_REQUEST="true",
                         HTTP_HX_CURRENT_URL="http://testserver/approvals/?status=pending")
    assert answer.status_code == 200 and answer.content == b""
    assert answer["HX-Redirect"] == "/login/?next=/approvals/%3Fstatus%3Dpending"


def test_api_key_does_not_open_the_console(client, service_client):
    _, key = service_client
    answer = client.get("/", HTTP_AUTHORIZATION=f"Token {key}")
    assert answer.status_code == 302
    assert answer["Location"].startswith(reverse("console:login"))


def test_sign_out_ends_the_session(signed_in):
    client = signed_in("support")
    assert client.post(reverse("console:logout")).status_code == 302
    assert client.get("/").status_code == 302


def test_navigation_shows_only_what_the_role_may_use(signed_in):
    support_page = signed_in("support").get("/").content.decode()
    assert "Sign out" in support_page
    for label in ("Policies", "Cases", "Refund approvals"):
        assert f">{label}</a>" not in support_page


class Publish(ConsolePage):
    capabilities = {"POST": Capability.EDIT_POLICIES}

    def post(self, request):
        return HttpResponse("published")


class Undeclared(ConsolePage):
    def post(self, request):
        return HttpResponse("changed")


def person_request(rf, person, method="post"):
    request = getattr(rf, method)("/policies/1/publish")
    request.user = person
    return request


def test_a_denied_action_answers_403_in_the_page_and_is_recorded(rf, make_person):
    answer = Publish.as_view()(person_request(rf, make_person("support", "sam")))
    assert answer.status_code == 403
    assert b"Not allowed" in answer.content and b"edit_policies" in answer.content
    denial = CommandRejection.objects.get(op_type="CONSOLE")
    assert (denial.actor, denial.error_code) == ("sam", "PERMISSION_DENIED")
    assert denial.details == {
        "path": "/policies/1/publish", "method": "POST", "capability": "edit_policies"}


def test_the_capability_holder_passes(rf, make_person):
    answer = Publish.as_view()(person_request(rf, make_person("policy_admin")))
    assert answer.content == b"published"
    assert not CommandRejection.objects.exists()


def test_an_action_without_a_declared_capability_fails_closed(rf, make_person):
    person = make_person("operator")
    person.is_superuser = True  # not even a superuser passes an undeclared action
    assert Undeclared.as_view()(person_request(rf, person)).status_code == 403


def test_reads_need_the_read_capability(rf, make_person):
    assert Undeclared.as_view()(person_request(rf, make_person(None), "get")).status_code == 403


def test_every_role_sees_the_dashboard_and_search_in_the_navigation(signed_in):
    for role in ("support", "operator", "policy_admin"):
        page = signed_in(role, f"{role}-nav").get("/search/").content.decode()
        assert '<a href="/">Dashboard</a>' in page, role
        assert '<a href="/search/" aria-current="page">Search</a>' in page, role


@pytest.mark.parametrize("docs", ["/api/v1/docs/", "/api/v1/redoc/"])
def test_api_docs_send_a_signed_out_visitor_to_the_console_sign_in(client, docs):
    answer = client.get(docs)

    assert answer.status_code == 302
    assert answer["Location"] == f"{reverse('console:login')}?next={docs}"


@pytest.mark.parametrize("docs", ["/api/v1/docs/", "/api/v1/redoc/"])
def test_api_docs_open_for_a_signed_in_person(signed_in, docs):
    browser = signed_in("support")
    answer = browser.get(docs)
    # Swagger UI names the schema in its start-up script, fetched from the page's own URL.
    started = browser.get(docs, {"script": ""}) if docs.endswith("/docs/") else answer

    assert answer.status_code == 200
    assert b"/api/v1/schema/" in started.content


def test_the_schema_still_answers_api_clients_not_the_sign_in_page(client, service_client):
    _, key = service_client
    assert client.get("/api/v1/schema/").status_code == 200
    assert client.get("/api/v1/schema/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200
    # A client sending a key to the docs page is answered by the API, never redirected.
    assert client.get("/api/v1/docs/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200
