import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

# gunicorn runs no system checks: a demo or short secret, or a PostgreSQL login
# that owns the tables or is a superuser, stops the worker here.
from common.checks import (  # noqa: E402
    refuse_to_start_as_database_owner,
    refuse_to_start_on_weak_secrets,
)

refuse_to_start_on_weak_secrets()
refuse_to_start_as_database_owner()
