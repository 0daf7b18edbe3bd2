"""GET /metrics for Prometheus (docs/operating.md).

Not for the public: it shows volumes, error codes and backlogs. Only a caller presenting
`Authorization: Bearer <METRICS_TOKEN>` reads it; with no token configured the page does not
exist (404), so a fresh install exposes nothing.
"""

import hmac

from django.conf import settings
from django.http import Http404, HttpResponse
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST

from operations.metrics import metrics_page


@require_GET
def metrics_view(request):
    expected = settings.METRICS_TOKEN
    if not expected:
        raise Http404
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.encode(), expected.encode()):
        return HttpResponse("A bearer token is needed.\n", status=401, content_type="text/plain",
                            headers={"WWW-Authenticate": 'Bearer realm="metrics"'})
    return HttpResponse(metrics_page(), content_type=CONTENT_TYPE_LATEST)
