"""Settings for Coupon Console.

SQLite by default so a fresh machine runs with nothing installed; DATABASE_URL
(postgres://...) switches to PostgreSQL, the real target.
"""

import os
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = os.environ.get("DJANGO_DEBUG", "1") == "1"
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "dev-only-not-secret-change-me-in-production")
# Lease tokens are HMACs of the lock id under this key; only their SHA-256 is stored.
LEASE_TOKEN_SECRET = os.environ.get("LEASE_TOKEN_SECRET", SECRET_KEY)
ALLOWED_HOSTS = os.environ.get("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost,testserver").split(",")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "coupons",
    "refunds",
    "timeline",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
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
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=0,
    )
}
if os.environ.get("TEST_DATABASE_NAME"):
    # Lets two test runs share one PostgreSQL server without dropping each other's database.
    DATABASES["default"]["TEST"] = {"NAME": os.environ["TEST_DATABASE_NAME"]}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Take the write lock at BEGIN and wait for it, so two writers queue instead of one
    # failing with "database is locked" when it upgrades a read to a write.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        timeout=20, transaction_mode="IMMEDIATE"
    )

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
LOGIN_URL = "/admin/login/"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "coupons.api.authentication.ServiceTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "coupons.api.permissions.HasCapability",
    ],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "coupons.api.pagination.StandardPagination",
    "DEFAULT_SCHEMA_CLASS": "coupons.api.schema.CapabilitySchema",
    "EXCEPTION_HANDLER": "coupons.api.exceptions.api_exception_handler",
    "COERCE_DECIMAL_TO_STRING": True,
    "UNAUTHENTICATED_USER": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Coupon Console API",
    "DESCRIPTION": (
        "Coupon lifecycle commands that prove ownership (order id + lease token + expected "
        "version). Every command needs an Idempotency-Key header."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    # Swagger UI and ReDoc served from the installed package: the docs work offline.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "CouponStatusEnum": "coupons.models.CouponStatus",
        "CaseStatusEnum": "coupons.models.CaseStatus",
        "InboxStatusEnum": ["PROCESSED", "DUPLICATE"],
        "CouponKindEnum": "coupons.models.CouponKind",
        "TimelineKindEnum": "timeline.selectors.KIND_ORDER",
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
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
    "loggers": {"coupons": {"level": os.environ.get("COUPONS_LOG_LEVEL", "INFO")}},
}
