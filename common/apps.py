from django.apps import AppConfig


class CommonConfig(AppConfig):
    """Plumbing any app may use; no models of its own."""

    name = "common"

    def ready(self):
        # Registers the start-up checks (secrets, the database login, middleware) for
        # `manage.py check` and every server start.
        import common.checks  # noqa: F401
