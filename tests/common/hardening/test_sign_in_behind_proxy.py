"""Behind the TLS proxy, wrong passwords from one address lock only it.

Before: django-axes keyed on REMOTE_ADDR, the proxy's address, so five wrong passwords for a
user "from" anywhere locked the right password out from every address.
"""

import pytest
from django.contrib.auth.models import User
from django.test import RequestFactory

from common.client_address import client_address

pytestmark = pytest.mark.django_db

PROXY = "10.0.0.2"
ATTACKER, OPERATOR = "203.0.113.9", "198.51.100.7"
FORMS = {"console": ("/login/", "/"), "admin": ("/admin/login/?next=/admin/", "/admin/")}


@pytest.fixture
def behind_one_proxy(settings):
    settings.TRUSTED_PROXY_COUNT = 1
    settings.TRUSTED_PROXY_ADDRESSES = [PROXY]
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    User.objects.create_user("operator2", password="right-password-42", is_staff=True,
                             is_superuser=True)


def sign_in(client, form, password, *, address, claimed=""):
    # What nginx sends: the client's own header (if any) with the peer's address appended.
    forwarded = f"{claimed}, {address}" if claimed else address
    return client.post(FORMS[form][0], {"username": "operator2", "password": password},
                       REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR=forwarded)


def signed_in(client, form) -> bool:
    return client.get(FORMS[form][1], REMOTE_ADDR=PROXY).status_code == 200


@pytest.mark.parametrize("form", FORMS)
def test_wrong_passwords_from_one_address_never_lock_another(
    behind_one_proxy, client, form, settings,
):
    for n in range(settings.AXES_FAILURE_LIMIT):
        sign_in(client, form, f"guess-{n}", address=ATTACKER)
    assert sign_in(client, form, "right-password-42", address=ATTACKER).status_code == 429

    answer = sign_in(client, form, "right-password-42", address=OPERATOR)

    assert answer.status_code == 302
    assert signed_in(client, form)


@pytest.mark.parametrize("form", FORMS)
def test_a_forged_forwarded_entry_does_not_escape_the_lock(
    behind_one_proxy, client, form, settings,
):
    for n in range(settings.AXES_FAILURE_LIMIT):
        sign_in(client, form, f"guess-{n}", address=ATTACKER, claimed=f"192.0.2.{n}")

    answer = sign_in(client, form, "right-password-42", address=ATTACKER, claimed=OPERATOR)

    assert answer.status_code == 429


@pytest.mark.parametrize("count, forwarded, expected", [
    (0, "203.0.113.9", "10.0.0.2"),
    (1, "203.0.113.9", "203.0.113.9"),
    (1, "1.2.3.4, 203.0.113.9", "203.0.113.9"),
    (2, "1.2.3.4, 203.0.113.9, 10.0.0.3", "203.0.113.9"),
    (2, "203.0.113.9", "203.0.113.9"),
    (1, "", "10.0.0.2"),
    (1, "not-an-address", "10.0.0.2"),
])
def test_the_client_address_is_the_entry_the_outermost_trusted_proxy_wrote(
    settings, count, forwarded, expected,
):
    settings.TRUSTED_PROXY_COUNT = count
    settings.TRUSTED_PROXY_ADDRESSES = ["10.0.0.0/24"]
    request = RequestFactory().get("/", REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR=forwarded)

    assert client_address(request) == expected


@pytest.mark.parametrize("form", FORMS)
def test_a_peer_that_is_not_a_trusted_proxy_cannot_name_its_address(
    behind_one_proxy, client, form, settings,
):
    # Past the proxy (the default 0.0.0.0 bind): each guess claims another address.
    for n in range(settings.AXES_FAILURE_LIMIT):
        client.post(FORMS[form][0], {"username": "operator2", "password": f"guess-{n}"},
                    REMOTE_ADDR=ATTACKER, HTTP_X_FORWARDED_FOR=f"192.0.2.{n}")
    answer = client.post(FORMS[form][0], {"username": "operator2",
                                          "password": "right-password-42"},
                         REMOTE_ADDR=ATTACKER, HTTP_X_FORWARDED_FOR="192.0.2.200")
    assert answer.status_code == 429  # locked out by its own address
    assert sign_in(client, form, "right-password-42", address=OPERATOR).status_code == 302


def test_x_forwarded_for_from_an_untrusted_peer_is_ignored(settings):
    settings.TRUSTED_PROXY_COUNT = 1
    settings.TRUSTED_PROXY_ADDRESSES = [PROXY]
    request = RequestFactory().get("/", REMOTE_ADDR=ATTACKER, HTTP_X_FORWARDED_FOR=OPERATOR)

    assert client_address(request) == ATTACKER
