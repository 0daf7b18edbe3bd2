"""The Content-Security-Policy header built once (common/csp_header.py) is the text django-csp
builds for the same answer, and an answer with a policy of its own still gets its own."""

from csp.constants import HEADER, NONCE
from csp.middleware import CSPMiddleware
from django.http import HttpResponse
from django.test import RequestFactory

from common.csp_header import CSPMiddlewareOnce


def answer(middleware_class, *, prepare=lambda request, response: None):
    request = RequestFactory().get("/api/v1/coupons")

    def view(request):
        response = HttpResponse("{}")
        prepare(request, response)
        return response

    return middleware_class(view)(request)


def test_a_plain_answer_gets_the_header_django_csp_builds():
    assert answer(CSPMiddlewareOnce)[HEADER] == answer(CSPMiddleware)[HEADER]
    assert "default-src 'self'" in answer(CSPMiddlewareOnce)[HEADER]


def test_an_answer_that_took_a_nonce_gets_it_in_its_header(settings):
    settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {"script-src": ["'self'", NONCE]}}

    def take_nonce(request, response):
        response.nonce = str(request.csp_nonce)

    response = answer(CSPMiddlewareOnce, prepare=take_nonce)

    assert f"'nonce-{response.nonce}'" in response[HEADER]


def test_a_view_s_own_change_of_the_policy_is_kept():
    def own_policy(request, response):
        response._csp_update = {"img-src": ["https://images.example"]}

    assert "https://images.example" in answer(CSPMiddlewareOnce, prepare=own_policy)[HEADER]


def test_a_changed_setting_builds_the_header_again(settings):
    answer(CSPMiddlewareOnce)  # built and kept with the settings as they were
    settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {"default-src": ["'none'"]}}

    assert answer(CSPMiddlewareOnce)[HEADER] == "default-src 'none'"
