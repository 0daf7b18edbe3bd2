"""django-csp's middleware with the header built once per process, not for every answer.

django-csp builds both policies from the settings on every response (each directive copied,
the parts joined), and an answer that took no nonce and whose view changed nothing of the
policy (csp decorators) gets the same text every time: every API answer and most pages. Such
an answer gets the text built at its first use, set under the same conditions as django-csp's
own `process_response`; any other answer (a nonce taken, a decorated view, a header already
set, DEBUG's error pages) goes through django-csp as before. A change of the settings (tests)
builds the text again.
"""

from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.middleware import CheckableLazyObject, CSPMiddleware
from csp.utils import build_policy
from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

# What a view or a template can set to make an answer's policy its own (csp.decorators).
OWN_POLICY = ("_csp_config", "_csp_update", "_csp_replace", "_csp_config_ro", "_csp_update_ro",
              "_csp_replace_ro", "_csp_exempt", "_csp_exempt_ro")
POLICIES = ((HEADER, "CONTENT_SECURITY_POLICY", False),
            (HEADER_REPORT_ONLY, "CONTENT_SECURITY_POLICY_REPORT_ONLY", True))
_built: dict[bool, str] = {}


def _policy(report_only: bool) -> str:
    if report_only not in _built:
        _built[report_only] = build_policy(report_only=report_only)
    return _built[report_only]


@receiver(setting_changed)
def _forget_policies(setting, **kwargs):
    if setting.startswith("CONTENT_SECURITY_POLICY") or setting == "DEBUG":
        _built.clear()


class CSPMiddlewareOnce(CSPMiddleware):
    def process_response(self, request, response):
        if (getattr(request, "_csp_nonce", None) is not None
                or any(hasattr(response, name) for name in OWN_POLICY)
                or HEADER in response or HEADER_REPORT_ONLY in response
                or (settings.DEBUG and response.status_code in (404, 500))):
            return super().process_response(request, response)
        for header, setting, report_only in POLICIES:
            policy = _policy(report_only)
            prefixes = (getattr(settings, setting, None) or {}).get("EXCLUDE_URL_PREFIXES") or ()
            if policy and not request.path_info.startswith(tuple(prefixes)):
                response[header] = policy
        # As django-csp: a nonce asked for after the header was written is an error.
        request.csp_nonce = CheckableLazyObject(self._csp_nonce_post_response)
        return response
