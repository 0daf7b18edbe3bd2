"""The API's documentation pages are for people: a signed-out visitor goes to the console's
sign-in page and comes back, instead of a bare 401. The schema itself is public (settings'
SPECTACULAR_SETTINGS): generators fetch it without a key."""

from functools import wraps

from django.contrib.auth.views import redirect_to_login


def sign_in_first(view):
    # wraps() keeps the view's `cls`, so the permission matrix still sees drf-spectacular's view.
    @wraps(view)
    def docs_page(request, *args, **kwargs):
        # The header first: a token request has no request.user (common/console_only.py).
        if "HTTP_AUTHORIZATION" not in request.META and not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        return view(request, *args, **kwargs)

    return docs_page
