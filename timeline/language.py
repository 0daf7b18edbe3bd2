"""The console's language per person: chosen in the header, remembered, applied on sign-in.

The order of precedence is Django's own (the language cookie, then Accept-Language), with one
addition: a signed-in user whose browser has no language cookie yet (a new browser, cookies
cleared) gets the language they chose before, and the cookie is set so later requests need no
query. Signing in sets it too, so a shared browser follows whoever signed in last.

The choice is read from the database once, at sign-in, and kept in the session: a request
costs no query for it (the pages' query counts are fixed).
"""

from django.conf import settings
from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver
from django.utils import translation

from common.console_only import ConsoleOnly
from coupons.clock import now
from timeline.models import ConsolePreference

LANGUAGE_CODES = frozenset(code for code, _ in settings.LANGUAGES)
SESSION_KEY = "console_language"


def console_language(*, user) -> str | None:
    """The language `user` chose in the console, or None if they never chose one."""
    return (ConsolePreference.objects.filter(user=user)
            .values_list("language", flat=True).first())


def console_language_set(*, request, language: str) -> None:
    """Remembers the signed-in user's language (one of settings.LANGUAGES) and uses it now."""
    if language not in LANGUAGE_CODES:
        raise ValueError(f"not a console language: {language!r}")
    ConsolePreference.objects.update_or_create(
        user=request.user, defaults={"language": language, "updated_at": now()})
    request.session[SESSION_KEY] = language
    _apply(request, language)
    request.console_language_to_remember = language


def remember_in_cookie(response, language: str) -> None:
    response.set_cookie(
        settings.LANGUAGE_COOKIE_NAME, language,
        max_age=settings.LANGUAGE_COOKIE_AGE, path=settings.LANGUAGE_COOKIE_PATH,
        domain=settings.LANGUAGE_COOKIE_DOMAIN, secure=settings.LANGUAGE_COOKIE_SECURE,
        httponly=settings.LANGUAGE_COOKIE_HTTPONLY, samesite=settings.LANGUAGE_COOKIE_SAMESITE,
    )


def _apply(request, language: str) -> None:
    translation.activate(language)
    request.LANGUAGE_CODE = translation.get_language()


@receiver(user_logged_in, dispatch_uid="timeline.language.on_sign_in")
def on_sign_in(sender, request, user, **kwargs):
    """The signed-in user's language from now on, whatever the browser's cookie said."""
    if request is None:  # a login without a request (a test's force_login) has no answer
        return
    language = console_language(user=user)
    if getattr(request, "session", None) is not None:
        request.session[SESSION_KEY] = language or ""
    if language:
        _apply(request, language)
        request.console_language_to_remember = language


class RememberedLanguageMiddleware:
    """After authentication: the remembered language where the browser has no cookie yet."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if (settings.LANGUAGE_COOKIE_NAME not in request.COOKIES
                and not request.path.startswith("/api/")
                and request.user.is_authenticated):
            language = request.session.get(SESSION_KEY)
            if language in LANGUAGE_CODES:
                _apply(request, language)
                request.console_language_to_remember = language
        response = self.get_response(request)
        language = getattr(request, "console_language_to_remember", None)
        if language:
            remember_in_cookie(response, language)
        return response


class RememberedLanguage(ConsoleOnly, RememberedLanguageMiddleware):
    """The middleware as settings name it: passed by for a service client's token request."""
