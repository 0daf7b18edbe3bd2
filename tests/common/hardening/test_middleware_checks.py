"""The deploy checks see the console-only middleware: Django's and axes' checks look for
their middleware by name and miss common/console_only.py's subclasses, so the project checks
it by class (common/checks.py) and an insecure CSRF cookie is reported again."""

from django.conf import settings
from django.core import checks
from django.test import override_settings

from tests.api.test_production_defaults import PRODUCTION_ENV, manage

CONSOLE_CSRF = "common.console_only.Csrf"


def deploy_warnings(**changed) -> set[str]:
    """The ids `check --deploy` shows (silenced ones left out) with `changed` settings."""
    with override_settings(**changed):
        return {message.id for message in checks.run_checks(include_deployment_checks=True)
                if not message.is_silenced()}


def middleware_without(path: str) -> list[str]:
    return [entry for entry in settings.MIDDLEWARE if entry != path]


def test_check_deploy_reports_an_insecure_csrf_cookie_on_the_production_settings():
    result = manage("check", "--deploy", "--fail-level", "WARNING",
                    env={**PRODUCTION_ENV, "DJANGO_HTTPS": "0"})

    assert result.returncode != 0
    assert "config.W005" in result.stderr
    assert "you have not set CSRF_COOKIE_SECURE to True" in result.stderr


def test_an_insecure_csrf_cookie_is_reported_with_the_console_only_middleware():
    assert CONSOLE_CSRF in settings.MIDDLEWARE
    assert "config.W005" in deploy_warnings(CSRF_COOKIE_SECURE=False)
    assert "config.W005" not in deploy_warnings(CSRF_COOKIE_SECURE=True)
    # As Django's own check: a token kept in the session needs no secure cookie.
    assert "config.W005" not in deploy_warnings(CSRF_COOKIE_SECURE=False, CSRF_USE_SESSIONS=True)


def test_a_missing_csrf_middleware_is_reported_and_django_s_own_class_counts():
    missing = deploy_warnings(MIDDLEWARE=middleware_without(CONSOLE_CSRF),
                              CSRF_COOKIE_SECURE=False)
    assert "config.W004" in missing
    assert "config.W005" not in missing  # nothing sets the cookie to secure or not

    plain = [entry.replace(CONSOLE_CSRF, "django.middleware.csrf.CsrfViewMiddleware")
             for entry in settings.MIDDLEWARE]
    assert "config.W004" not in deploy_warnings(MIDDLEWARE=plain, CSRF_COOKIE_SECURE=True)


def test_a_missing_sign_in_lockout_middleware_is_reported():
    assert "config.W006" not in deploy_warnings()
    assert "config.W006" in deploy_warnings(
        MIDDLEWARE=middleware_without("common.console_only.Axes"))
