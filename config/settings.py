"""Settings for Coupon Console.

PostgreSQL only. DATABASE_URL (postgres://...) names the server; unset, the checkout's own
embedded PostgreSQL (common/embedded_postgres.py) is started or reused at the first connection,
so a fresh machine runs
with nothing but python3: cluster EMBEDDED_DATABASE (`demo` by default, `test` for the suite),
login EMBEDDED_DATABASE_USER (the owner `postgres` by default; bin/run-demo's server logs in
as the application role after the owner migrated and ran setup_db_roles, as in production).
"""

import importlib.util
import ipaddress
import os
from datetime import timedelta
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from config.env import (
    database_config,
    env_flag,
    env_int,
    env_list,
    env_rate,
    env_time_zone,
    idempotency_seal_secret,
    lease_token_secrets,
    required_secret,
)

BASE_DIR = Path(__file__).resolve().parent.parent

# --- Safe defaults: DEBUG only when asked for, no secret in the repository ---------
# DEBUG pages show settings, the request and its body; they are never the default.
DEBUG = env_flag("DJANGO_DEBUG", default=False)
# The demo (bin/run-demo sets COUPONS_DEMO=1) runs no outbox relay: the console's dashboard says
# so instead of raising the production alarm about events waiting to be published.
COUPONS_DEMO = env_flag("COUPONS_DEMO", default=False)
SECRET_KEY = required_secret("DJANGO_SECRET_KEY")
# Lease tokens are HMACs of the lock id under one of these keys (current first); only their
# SHA-256 is stored, with the key id on the lock so a rotation keeps old leases valid.
LEASE_TOKEN_SECRETS = lease_token_secrets(secret_key=SECRET_KEY)
# Idempotency-Key records and request fingerprints are HMACs under this key, which the
# database never holds: a record written past the server is never replayed.
IDEMPOTENCY_SEAL_SECRET = idempotency_seal_secret(
    others=[SECRET_KEY, *LEASE_TOKEN_SECRETS.values()])
# Customers' phone numbers are kept only as HMACs under this key (coupons/phones.py); without
# it a CustomerProfileUpdated fact and a phone search are refused.
CUSTOMER_PHONE_KEY = os.environ.get("CUSTOMER_PHONE_KEY", "")
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", default="127.0.0.1,localhost,testserver")

# --- HTTPS: on unless DEBUG; docs/deploy.md ---------------------------
HTTPS = env_flag("DJANGO_HTTPS", default=not DEBUG)
SECURE_SSL_REDIRECT = HTTPS
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", default=365 * 24 * 3600 if HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_flag("DJANGO_HSTS_INCLUDE_SUBDOMAINS", default=HTTPS)
SECURE_HSTS_PRELOAD = env_flag("DJANGO_HSTS_PRELOAD", default=HTTPS)
if env_flag("DJANGO_BEHIND_TLS_PROXY", default=False):
    # Only behind a proxy that sets X-Forwarded-Proto itself: a client could send it too.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "axes",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "csp",  # Content-Security-Policy on every answer (CONTENT_SECURITY_POLICY below)
    "pgtrigger",  # database triggers that keep history rows append-only (PostgreSQL)
    "django_prometheus",  # HTTP and database metrics at /metrics (operations/metrics_view.py)
    "common",
    "api",
    "coupons",
    "refunds",
    "operations",  # what runs in the background: relay, fact consumer, reconcile, prune
    "timeline.apps.ConsoleConfig",
]

# axes and Django's deploy check look for their middleware by name; common.console_only.Axes
# and .Csrf are those classes, passed by only for a service client's token request under /api/
# (every console form keeps CSRF and lockout: tests/api/test_lean_path.py). Their "missing"
# warnings are checked by class instead (config.W004-W006, common/checks.py), which also gives
# back Django's insecure CSRF cookie warning, blind to the subclass.
SILENCED_SYSTEM_CHECKS = ["axes.W002", "security.W003"]
MIDDLEWARE = [
    # Outermost pair: django-prometheus times every request, probes included.
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    # Statements and failed statements per request, counted in plain integers and added to
    # the django_db_* counters once (common/db_metrics.py).
    "common.db_metrics.DatabaseMetricsMiddleware",
    # Logs carry the request id (X-Request-ID, accepted or made), the client and the coupon.
    "common.request_context.RequestContextMiddleware",
    # First: /healthz and /readyz answer a load balancer before host checks and the HTTPS
    # redirect (common/health.py; docs/deploy.md).
    "common.health.HealthCheckMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # django-csp's, with the header built once (common/csp_header.py).
    "common.csp_header.CSPMiddlewareOnce",
    # Static files from the process itself (collected by bin/serve), before sessions and auth.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Outside everything but the HTTPS redirect: a 404 or 500 under /api/ is JSON, never a page.
    "api.middleware.ApiVersionMiddleware",
    "api.middleware.ApiErrorsMiddleware",
    # common.console_only.*: the named Django middleware, passed by for a service client's
    # `Authorization: Token` API request, which needs no session, CSRF, user or messages.
    "common.console_only.Sessions",
    # Language from the cookie, else Accept-Language (console and API alike); after sessions,
    # before common, as Django asks.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "common.console_only.Csrf",
    "common.console_only.Authentication",
    # A signed-in user's remembered language when the browser has no language cookie yet.
    "timeline.language.RememberedLanguage",
    "common.console_only.Messages",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "common.console_only.Htmx",
    # A person's API reads (with their console session) and admin change pages, in the view
    # log (timeline/view_log.py).
    "timeline.view_log.ViewLog",
    # Last, as django-axes asks: it answers a locked-out sign-in.
    "common.console_only.Axes",
    "django_prometheus.middleware.PrometheusAfterMiddleware",
]

ROOT_URLCONF = "config.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "timeline.navigation.console_nav",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"

if os.environ.get("DATABASE_URL"):
    DATABASES = {"default": database_config(os.environ["DATABASE_URL"], conn_max_age=0)}
else:
    from common import embedded_postgres

    cluster = os.environ.get("EMBEDDED_DATABASE", "demo")
    DATABASES = {"default": database_config(embedded_postgres.url(
        cluster, user=os.environ.get("EMBEDDED_DATABASE_USER", embedded_postgres.OWNER)),
        conn_max_age=0)}
    # common.postgresql starts (or finds) the cluster at the first connection.
    DATABASES["default"]["EMBEDDED_CLUSTER"] = cluster
if DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
    raise ImproperlyConfigured("DATABASE_URL names a PostgreSQL server (postgres://...); "
                               "unset, the embedded PostgreSQL is used.")
# --- Pooled connections: docs/deploy.md ---------------------------------------
# Each process keeps a psycopg pool, so a request borrows an open connection
# instead of paying a connect and authentication. DB_POOL_MAX_SIZE must cover the threads of
# one process (GUNICORN_THREADS); 0 turns the pool off (behind PgBouncer, say), and a
# connection then lives per request as before.
DB_POOL_MAX_SIZE = env_int("DB_POOL_MAX_SIZE", default=10)
if DB_POOL_MAX_SIZE:
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": min(env_int("DB_POOL_MIN_SIZE", default=2), DB_POOL_MAX_SIZE),
        "max_size": DB_POOL_MAX_SIZE,
        # A request waits this long for a free connection, then fails (503 under /api/); not
        # while the database refuses connections: then at once (common/postgresql/base.py).
        "timeout": env_int("DB_POOL_TIMEOUT_SECONDS", default=10),
        # The pool stops retrying a failed connection after this long (psycopg_pool's default:
        # 5 minutes, its retries further and further apart), and the next request asks for a
        # new one at once: served again within a request of the database coming back.
        "reconnect_timeout": 2,
        # A connection idle this long is closed (down to min_size). config/postgresql checks
        # each connection before handing it out, so one the server dropped is replaced.
        "max_idle": 300,
    }
# --- Prepared statements: docs/performance.md -----------------------------------
# Server-side binding, and psycopg prepares a statement a connection has run
# DB_PREPARE_THRESHOLD times, so the commands' two statements are parsed and planned once per
# pooled connection. Behind PgBouncer in transaction mode (before 1.21, or without
# max_prepared_statements) a prepared statement may be missing on the next server connection:
# DATABASE_PREPARED_STATEMENTS=0 turns both off (client-side binding, nothing prepared).
DATABASE_PREPARED_STATEMENTS = env_flag("DATABASE_PREPARED_STATEMENTS", default=True)
DATABASES["default"].setdefault("OPTIONS", {}).update(
    # A server that does not answer (a host gone, packets dropped) fails a connect after this
    # long instead of the kernel's minutes; one that refuses fails at once anyway.
    connect_timeout=env_int("DB_CONNECT_TIMEOUT_SECONDS", default=5),
    server_side_binding=DATABASE_PREPARED_STATEMENTS,
    prepare_threshold=env_int("DB_PREPARE_THRESHOLD", default=5)
    if DATABASE_PREPARED_STATEMENTS else None,
)
# Long-running processes (relay, fact consumer, scanners in --loop): the server ends a session
# of theirs idle in a transaction this long (a frozen relay's claimed rows are freed; longer
# than a batch's publishing takes), and TCP keepalives find a vanished peer in about this long
# (operations/worker.py). Behind PgBouncer, which refuses startup options unless told to
# ignore them, set its idle_transaction_timeout instead.
WORKER_IDLE_IN_TRANSACTION_SECONDS = env_int("WORKER_IDLE_IN_TRANSACTION_SECONDS", default=60)
WORKER_TCP_KEEPALIVE_SECONDS = env_int("WORKER_TCP_KEEPALIVE_SECONDS", default=30)
# The relay's LISTEN for committed outbox rows holds one session open; through PgBouncer in
# transaction pooling mode it would hear nothing, so it may connect straight to the primary
# (a libpq URL; multi-host allowed). Empty: the same server as DATABASE_URL.
RELAY_LISTEN_DATABASE_URL = os.environ.get("RELAY_LISTEN_DATABASE_URL", "").strip()
if os.environ.get("TEST_DATABASE_NAME"):
    # Lets two test runs share one PostgreSQL server without dropping each other's database.
    DATABASES["default"]["TEST"] = {"NAME": os.environ["TEST_DATABASE_NAME"]}
# Django's own backends: statements are counted per request (common/db_metrics.py), not by
# django-prometheus's backends, which wrap every execute in metric calls.

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Content-Security-Policy: docs/deploy.md -------------------------
# Scripts only from this origin, never inline: the console's behaviour is in console.js, htmx
# runs without eval (hx-on is not used), the API docs start from their own script files.
# Styles allow inline: the console colours order lanes with style="--c: ..." and ReDoc styles
# itself at run time; a style cannot run code. ReDoc's search runs in a blob: worker.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "worker-src": ["'self'", "blob:"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}

# --- Sign-in attempt limits: django-axes; docs/deploy.md -------------
# AxesStandaloneBackend first: it refuses a locked-out username + address before any password
# is checked. It needs the request, so tests sign in with force_login or login(request=...).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    # ModelBackend with its permissions in one query (common/auth_backend.py).
    "common.auth_backend.OneQueryModelBackend",
]
AXES_FAILURE_LIMIT = env_int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("AXES_COOLOFF_MINUTES", default=15))
# Per username and address together: a wrong password from elsewhere cannot lock a user out.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
# Lockouts are lifted with `manage.py axes_reset_username NAME`; the admin does not list them,
# so every admin page stays under the capability rules (tests/api/test_permission_matrix.py).
AXES_ENABLE_ADMIN = False

# --- Client address behind proxies: docs/deploy.md ------------------
# How many proxies in front of the server append to X-Forwarded-For (nginx, a load balancer);
# sign-in limits and the anonymous API throttle key on the address the outermost one saw.
# 0: REMOTE_ADDR. Behind the recommended TLS proxy, one.
TRUSTED_PROXY_COUNT = env_int(
    "TRUSTED_PROXY_COUNT", default=1 if env_flag("DJANGO_BEHIND_TLS_PROXY", default=False) else 0
)
# The proxies' own addresses or networks (comma-separated): X-Forwarded-For is believed only on
# a request whose peer is one of them, so a client that reaches the server past the proxy (the
# default 0.0.0.0 bind) cannot name any address it likes for itself.
TRUSTED_PROXY_ADDRESSES = env_list("TRUSTED_PROXY_ADDRESSES")
if TRUSTED_PROXY_COUNT and not TRUSTED_PROXY_ADDRESSES:
    raise ImproperlyConfigured(
        "TRUSTED_PROXY_COUNT (or DJANGO_BEHIND_TLS_PROXY=1) needs TRUSTED_PROXY_ADDRESSES: the "
        "addresses of the proxies whose X-Forwarded-For is believed (docs/deploy.md).")
for _address in TRUSTED_PROXY_ADDRESSES:
    try:
        ipaddress.ip_network(_address, strict=False)
    except ValueError as _error:
        raise ImproperlyConfigured(f"TRUSTED_PROXY_ADDRESSES: {_error}") from None
AXES_CLIENT_IP_CALLABLE = "common.client_address.client_address"
# Attempts are database rows (AxesDatabaseHandler), so each test starts clean and
# `manage.py axes_reset` (or axes_reset_username NAME) unlocks.

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

# --- Languages: docs/console.md ---------------------------------------------
# English by default; a browser asking for Chinese (Accept-Language) gets it, and a signed-in
# console user's own choice (timeline.ConsolePreference) wins over the browser.
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
# The catalogue (locale/zh_Hans/LC_MESSAGES/django.po); bin/test and bin/run-demo compile it.
LOCALE_PATHS = [BASE_DIR / "locale"]
# The language cookie says only which language a browser reads: readable by nothing but us.
LANGUAGE_COOKIE_HTTPONLY = True
LANGUAGE_COOKIE_SAMESITE = "Lax"
LANGUAGE_COOKIE_SECURE = HTTPS
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
# bin/release runs collectstatic into here (with gzip copies); WhiteNoise serves it.
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
LOGIN_URL = "console:login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "console:login"
CONSOLE_CURRENCY_SYMBOL = os.environ.get("CONSOLE_CURRENCY_SYMBOL", "¥")
# The zone the ready replies write times in: the customers', whatever the agent's browser is on.
COUPON_CUSTOMER_TIME_ZONE = env_time_zone("COUPON_CUSTOMER_TIME_ZONE", default="Asia/Shanghai")

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "api.authentication.ServiceTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "api.permissions.HasCapability",
    ],
    "DEFAULT_PARSER_CLASSES": ["api.fast_json.FastJSONParser"],
    # JSON only. The browsable API renders forms by running every method's
    # permission check, so in production ?format=api or Accept: text/html only adds surface;
    # a developer gets it back with DJANGO_DEBUG=1.
    "DEFAULT_RENDERER_CLASSES": ["api.fast_json.FastJSONRenderer"]
    + (["rest_framework.renderers.BrowsableAPIRenderer"] if DEBUG else []),
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "api.pagination.StandardPagination",
    "DEFAULT_SCHEMA_CLASS": "api.schema.CapabilitySchema",
    "EXCEPTION_HANDLER": "api.exceptions.api_exception_handler",
    # OPTIONS is not part of the API (the public schema describes it): every path answers it
    # 405, instead of DRF's metadata naming views and serializers to whoever may read.
    "DEFAULT_METADATA_CLASS": None,
    # `Accept: application/problem+json` takes JSON answers and problem-details errors.
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "api.problems.ProblemAwareNegotiation",
    "COERCE_DECIMAL_TO_STRING": True,
    "UNAUTHENTICATED_USER": None,
    # Throttles: per service client and per signed-in user, counted in CACHES.
    "DEFAULT_THROTTLE_CLASSES": [
        "api.throttling.ServiceClientRateThrottle",
        "api.throttling.UserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "service_client": env_rate("API_THROTTLE_SERVICE_CLIENT", default="1200/min"),
        "user": env_rate("API_THROTTLE_USER", default="300/min"),
        # Requests answered 401 (no key, a wrong one) per client address.
        "anonymous": env_rate("API_THROTTLE_ANONYMOUS", default="60/min"),
    },
}

# --- Cache (throttle counters) ---------------------------------------------------------
# Per process by default. With several server processes the counters must be shared: set
# REDIS_URL (redis://127.0.0.1:6379/0) and install the `redis` extra.
if os.environ.get("REDIS_URL"):
    if importlib.util.find_spec("redis") is None:
        raise ImproperlyConfigured(
            "REDIS_URL is set but the redis package is not installed: pip install -e '.[redis]'."
        )
    # Values are JSON, never pickles: a write to Redis must not run code here. Redis is a
    # cache: unreachable, each process answers from its own memory (common/resilient_cache.py),
    # after waiting REDIS_TIMEOUT_MS at most, and asks it again after REDIS_RETRY_SECONDS.
    _redis_timeout = env_int("REDIS_TIMEOUT_MS", default=500) / 1000
    CACHES = {"default": {"BACKEND": "common.resilient_cache.ResilientRedisCache",
                          "LOCATION": os.environ["REDIS_URL"],
                          "OPTIONS": {"serializer": "common.cache_serializer.JsonSerializer",
                                      "socket_connect_timeout": _redis_timeout,
                                      "socket_timeout": _redis_timeout}}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
REDIS_RETRY_SECONDS = env_int("REDIS_RETRY_SECONDS", default=5)

# An error's problem `type` is its code's entry here (api/problems.py): by default the
# instance's own error reference (api/error_reference.py), relative to the serving instance;
# or where docs/api.md is published, whose "Error codes" headings have the same anchors.
API_ERROR_DOCS_URL = os.environ.get("API_ERROR_DOCS_URL", "/api/v1/errors/").strip()

SPECTACULAR_SETTINGS = {
    "TITLE": "Coupon Console API",
    "DESCRIPTION": (
        "Coupon lifecycle commands that prove ownership (order id + lease token + expected "
        "version). Every command needs an Idempotency-Key header."
    ),
    "VERSION": "1.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema is the contract, not a secret: anyone may fetch it (JSON with ?format=json),
    # with or without a key, and generate a client from it.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SERVE_AUTHENTICATION": [],
    # Swagger UI and ReDoc served from the installed package: the docs work offline.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # Relative: the schema describes whichever instance serves it.
    "SERVERS": [{"url": "/", "description": "The instance serving this schema"}],
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "api.schema.tidy_schema",
    ],
    # api.converters.DatabaseIdConverter: up to 18 digits, so a huge id is a 404.
    "PATH_CONVERTER_OVERRIDES": {
        "dbid": {"type": "integer", "minimum": 0, "maximum": 10**18 - 1},
    },
    "ENUM_NAME_OVERRIDES": {
        "CouponStatusEnum": "coupons.models.CouponStatus",
        "CaseStatusEnum": "coupons.models.CaseStatus",
        "FactTypeEnum": "coupons.models.FactType",
        "OperationTypeEnum": "coupons.models.OperationType",
        # The names these sets had before more fields took them, so generated types keep theirs.
        "OpTypeEnum": ["REVERSE", "COMPENSATE"],
        "RefundCouponDecisionOutputActionEnum": "refunds.models.RefundCoupon.Action",
        "RefundDecisionOutputStatusEnum": "refunds.models.RefundCoupon.Status",
        "RefundTypeEnum": "refunds.policy_engine.RefundType.ALL",
        "InboxStatusEnum": ["PROCESSED", "DUPLICATE"],
        "CouponKindEnum": "coupons.models.CouponKind",
        "TimelineKindEnum": "coupons.history.KIND_ORDER",
        "ErrorCodeEnum": "api.error_serializers.ERROR_CODES",
        # One name per choice set, as in 1.1.0: a later field with the same set takes it too.
        "ExpiryDuringLockEnum": "coupons.models.ExpiryDuringLock",
        "StrategyEnum": ["LOCK_HONORS", "STRICT", "SUBSTITUTE", ""],
        "SettlementOutcomeSettlementEnum": "coupons.models.SettlementResult",
        "CompensationOutputStatusEnum": "refunds.models.Compensation.Status",
    },
}

COUPONS = {
    # A lease that is neither given lease_seconds nor lease_until lasts this long.
    "DEFAULT_LEASE_SECONDS": 900,
    # Presale leases run until final payment, so the ceiling is generous.
    "MAX_LEASE_SECONDS": 90 * 24 * 3600,
    # A presale lease lasts until the final-payment deadline plus this grace.
    "PRESALE_GRACE_SECONDS": 24 * 3600,
    # An Idempotency-Key claim left IN_PROGRESS this long (a crashed worker) may be taken over.
    "IDEMPOTENCY_CLAIM_TIMEOUT_SECONDS": 60,
    # A request whose Idempotency-Key twin is still running waits this long for its answer,
    # then is told 409 IDEMPOTENCY_REQUEST_IN_PROGRESS.
    "IDEMPOTENCY_TWIN_WAIT_MS": 2000,
    # A command waits this long for its coupon's row held by another transaction, then answers
    # 409 COUPON_BUSY with Retry-After; each later statement of the command is given this long.
    # Server threads never wait unbounded on one coupon (docs/deploy.md).
    "COMMAND_LOCK_TIMEOUT_MS": env_int("COMMAND_LOCK_TIMEOUT_MS", default=2000),
    "COMMAND_STATEMENT_TIMEOUT_MS": env_int("COMMAND_STATEMENT_TIMEOUT_MS", default=5000),
    # How long an API request may trust the cached service-client row (read on every request).
    # Saving the client (a deactivation, new grants) drops the entry at once; the cache is
    # per process unless REDIS_URL is set, so other processes may trust it this long.
    "SERVICE_CLIENT_CACHE_SECONDS": 10,
    # A fact's times (occurred_at, a presale deadline) must lie this close to now, either way.
    "FACT_TIME_WINDOW_DAYS": 5 * 366,
    # Retention (`manage.py prune`, docs/events.md). Published outbox rows: long enough to
    # replay a consumer's last week from the table.
    "OUTBOX_RETENTION_DAYS": 7,
    # Completed Idempotency-Key records: a retry after this is a new request (Stripe: 24 hours).
    "IDEMPOTENCY_RETENTION_HOURS": 24,
    # Inbox de-dup rows: must outlive the senders' longest redelivery (their retry horizon).
    "INBOX_RETENTION_DAYS": 30,
    # Reconciliation: a RETURN's event still unpublished this long after its commit is a
    # finding (the relay's normal lag is under a second; this leaves room for a broker restart).
    "RECONCILE_UNPUBLISHED_GRACE_SECONDS": 300,
    # Coupons read per reconciliation batch: memory and query size grow with this, not with
    # the number of coupons.
    "RECONCILE_BATCH_SIZE": 1000,
}

# --- Impact replay bounds: docs/after-sale.md -----------------------------------
# A preview replays at most the newest this many stored decisions (the page and the API answer
# say so); one replay per person at a time, its slot freed after this many seconds at the latest.
IMPACT_REPLAY_SAMPLE = env_int("IMPACT_REPLAY_SAMPLE", default=10_000)
IMPACT_REPLAY_SLOT_SECONDS = 300

# --- The per-coupon check's bound: docs/evidence.md ---------------------------------
# A coupon's page and GET /check read at most the newest this many ledger rows after the
# check's watermark (and of each evidence table after its mark); the answer says how far the
# history is verified, and `manage.py coupon_check --full` verifies the rest in the background.
COUPON_CHECK_NEWEST_ROWS = env_int("COUPON_CHECK_NEWEST_ROWS", default=200)

# --- Events: the outbox relay's broker; see docs/events.md ---------------------------
# One AMQP URL, or a cluster's nodes separated by commas (operations/broker.py).
BROKER_URL = os.environ.get("BROKER_URL", "amqp://guest:guest@127.0.0.1:5672/%2F")
# The topic exchange the relay publishes events to (relay_outbox --exchange overrides it for
# one process); the served AsyncAPI document binds its event channel to it.
BROKER_EVENTS_EXCHANGE = os.environ.get("BROKER_EVENTS_EXCHANGE", "coupons").strip() or "coupons"

# --- Resilience: docs/operating.md, "Resilience" ----------------------------------
# PostgreSQL through config/postgresql: Django's backend whose pool checks each borrowed
# connection and drains the idle ones at the first that the server dropped (not
# CONN_HEALTH_CHECKS: the pool then backs off 1, 2, 4 s per dead connection of a request).
DATABASES["default"]["ENGINE"] = "common.postgresql"
# Every wait on the broker (connecting, a publisher confirm, a blocked connection) ends after
# this many seconds: the relay holds its batch's transaction across the confirm wait.
BROKER_CONFIRM_TIMEOUT_SECONDS = env_int("BROKER_CONFIRM_TIMEOUT_SECONDS", default=5)
# AMQP heartbeat asked of the broker: a silent broker connection is dropped after about twice
# this (pika checks every heartbeat + 5 s), even while a process idles on it.
BROKER_HEARTBEAT_SECONDS = env_int("BROKER_HEARTBEAT_SECONDS", default=10)
# The relay, the fact consumer and scanners in loop mode retry a lost database or broker
# connection after a back-off doubling from the first value up to the second, never exiting.
WORKER_RETRY_MIN_SECONDS = env_int("WORKER_RETRY_MIN_MS", default=500) / 1000
WORKER_RETRY_MAX_SECONDS = env_int("WORKER_RETRY_MAX_MS", default=30_000) / 1000

# --- Signals: docs/operating.md ---------------------------------------------------
# /metrics answers only `Authorization: Bearer <METRICS_TOKEN>`; unset, /metrics is a 404. It
# shows volumes, error codes and backlogs: for the monitoring system, not for the public.
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")
if METRICS_TOKEN and len(METRICS_TOKEN) < 32:
    raise ImproperlyConfigured("METRICS_TOKEN must be at least 32 characters.")

# --- Signed ledger checkpoints: docs/evidence.md ----------------------------------
# The Ed25519 private key (base64 of 32 bytes, or PEM) that signs checkpoints. Only the commands
# that sign read it (coupons/evidence/checkpoint_keys.py); the server never signs, so it starts
# without.
LEDGER_SIGNING_KEY = os.environ.get("LEDGER_SIGNING_KEY", "")
# The public half (`manage.py ledger_public_key`), for the web servers: a page or a proof shows
# only a checkpoint whose signature verifies under it (unset: the public half of
# LEDGER_SIGNING_KEY where that is set; neither: no checkpoint is shown as verified).
LEDGER_PUBLIC_KEY = os.environ.get("LEDGER_PUBLIC_KEY", "")
# Where `ledger_checkpoint` writes each signed checkpoint as a new file (never overwritten):
# a directory another system copies away, or a mount of append-only storage.
LEDGER_CHECKPOINT_DIR = os.environ.get("LEDGER_CHECKPOINT_DIR", "")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # No API key, lease token or Authorization header in any log line.
    "filters": {"redact_secrets": {"()": "common.log_redaction.RedactSecrets"}},
    # One JSON object a line, with the request id, client and coupon (common/log_json.py);
    # LOG_FORMAT=text for people reading a terminal.
    "formatters": {
        "json": {"()": "common.log_json.JsonFormatter"},
        "text": {"format": "%(levelname)s %(name)s %(message)s"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "filters": ["redact_secrets"],
                    "formatter": os.environ.get("LOG_FORMAT", "json")},
    },
    "root": {"handlers": ["console"], "level": "WARNING"},
    "loggers": {
        "api": {"level": os.environ.get("COUPONS_LOG_LEVEL", "INFO")},
        "common": {"level": os.environ.get("COUPONS_LOG_LEVEL", "INFO")},
        "console": {"level": os.environ.get("COUPONS_LOG_LEVEL", "INFO")},
        "coupons": {"level": os.environ.get("COUPONS_LOG_LEVEL", "INFO")},
        # The relay, the fact consumer and reconciliation log under operations.*.
        "operations": {"level": os.environ.get("COUPONS_LOG_LEVEL", "INFO")},
        "refunds": {"level": os.environ.get("COUPONS_LOG_LEVEL", "INFO")},
        # Replace Django's own handlers (which would print unredacted) with the one above.
        "django": {"handlers": ["console"], "level": "INFO", "propagate": False},
        "django.server": {"handlers": ["console"], "level": "INFO", "propagate": False},
    },
}

# --- Read replicas: docs/deploy.md --------------------------------------------
# DATABASE_REPLICA_URLS (comma-separated postgres:// URLs, the app role's login on each streaming
# replica): console pages and API GETs read from one (common/replica_reads.py), everything else
# from the primary. Unset, nothing changes: no router, no middleware, no extra query.
DATABASE_REPLICA_URLS = env_list("DATABASE_REPLICA_URLS")
# A replica further behind than this answers nothing: the primary does, as without replicas.
DATABASE_REPLICA_MAX_LAG_SECONDS = env_int("DATABASE_REPLICA_MAX_LAG_SECONDS", default=5)
# After a person's or client's write, for this long their reads wait for a replica that has
# replayed it, reading from the primary meanwhile. The write's position travels with the caller
# (a signed cookie, the X-Consistency-Token header), so no server process needs to share it.
DATABASE_REPLICA_READ_YOUR_WRITES_SECONDS = env_int(
    "DATABASE_REPLICA_READ_YOUR_WRITES_SECONDS", default=60)
DATABASE_REPLICA_ALIASES = []
if DATABASE_REPLICA_URLS:
    for number, url in enumerate(DATABASE_REPLICA_URLS, start=1):
        parsed = database_config(url)
        replica = {**DATABASES["default"], **{key: parsed[key] for key in
                                              ("NAME", "USER", "PASSWORD", "HOST", "PORT")}}
        replica.pop("EMBEDDED_CLUSTER", None)  # a replica is DATABASE_REPLICA_URLS' server
        options = dict(replica.get("OPTIONS", {}))
        # A replica that is down must cost a request two seconds at most, not the pool's wait.
        options["connect_timeout"] = 2
        if "pool" in options:
            options["pool"] = {**options["pool"], "timeout": 2}
        replica["OPTIONS"] = options
        replica["TEST"] = {"MIRROR": "default"}  # a test run has one database
        DATABASES[f"replica_{number}"] = replica
        DATABASE_REPLICA_ALIASES.append(f"replica_{number}")
    DATABASE_ROUTERS = ["common.replica_router.ReplicaRouter"]
    # After authentication (the caller's key) and before the views it routes.
    MIDDLEWARE.insert(MIDDLEWARE.index("common.console_only.Authentication")
                      + 1, "common.replica_reads.ReplicaReadsMiddleware")
TEMPLATES[0]["OPTIONS"]["context_processors"].append("common.replica_reads.data_as_of")
