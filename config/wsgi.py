import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

# gunicorn runs no system checks: a demo or short secret stops the worker here (issue 16).
from config.checks import refuse_to_start_on_weak_secrets  # noqa: E402

refuse_to_start_on_weak_secrets()
