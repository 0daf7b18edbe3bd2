from django.apps import AppConfig


class ApiConfig(AppConfig):
    """The HTTP kit every domain's endpoints share; no models of its own."""

    name = "api"

    def ready(self):
        # The API caches service clients; every process that can save one must drop the entry.
        from api import authentication  # noqa: F401 - connects forget_cached_client
