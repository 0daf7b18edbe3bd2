"""Bad input never answers 500, always the error body (docs/api.md), and never changes anything."""

import json
from types import SimpleNamespace

import pytest
from rest_framework.test import APIClient

from coupons.models import CommandRejection, IdempotencyRecord
from coupons.services import coupon_issue, service_client_create
from tests.command_checks import world

pytestmark = pytest.mark.django_db

DROP = object()  # remove the field from the valid request
TOKEN, TEMPLATE_ID = "<lock token>", "<template id>"  # filled in per test
HUGE = "99999999999999999999"

VALID = {
    "lock": ("coupons/{available}/lock",
             {"order_id": "B", "user_id": "u1", "order_amount": "300.00"}),
    "renew": ("coupons/{locked}/renew",
              {"order_id": "A", "lock_token": TOKEN, "expected_version": 2}),
    "redeem": ("coupons/{locked}/redeem",
               {"order_id": "A", "lock_token": TOKEN, "expected_version": 2, "payment_id": "P1"}),
    "release": ("coupons/{locked}/release",
                {"order_id": "A", "lock_token": TOKEN, "expected_version": 2, "reason": "closed"}),
    "void": ("coupons/{locked}/void", {"expected_version": 2, "reason": "risk"}),
    "issue": ("coupons", {"template_id": TEMPLATE_ID, "user_id": "u1"}),
    "template": ("templates", {"code": "fresh", "name": "Fresh", "kind": "AMOUNT_OFF",
                               "face_value": "5.00", "valid_days": 10}),
}


@pytest.fixture
def targets(api, template, ctx):
    """An AVAILABLE coupon, and one LOCKED by order A at version 2 (its token known)."""
    available, locked = (coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
                         for _ in range(2))
    lease = api.post(f"/api/v1/coupons/{locked.pk}/lock",
                     {"order_id": "A", "user_id": "u1", "order_amount": "300.00"},
                     format="json", HTTP_IDEMPOTENCY_KEY="setup-lock").json()
    return SimpleNamespace(available=available.pk, locked=locked.pk,
                           token=lease["lock_token"], template=template.pk)


def valid_request(targets, command, changes=None) -> tuple[str, dict]:
    path, body = VALID[command]
    fill = {TOKEN: targets.token, TEMPLATE_ID: targets.template}
    body = {field: fill.get(value, value) for field, value in body.items()}
    for field, value in (changes or {}).items():
        if value is DROP:
            body.pop(field)
        else:
            body[field] = value
    return "/api/v1/" + path.format(**vars(targets)), body


def assert_refused(response, status, code) -> dict:
    """The error body (docs/api.md) with the expected status and code; answers `details`."""
    assert response.status_code == status, response.content[:500]
    body = response.json()
    assert list(body) == ["error"]
    assert set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == code, body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    assert isinstance(body["error"]["details"], dict)
    return body["error"]["details"]


def send(api, path, body=None, *, raw=None, content_type="application/json", key="bad-1"):
    if raw is not None:
        return api.generic("POST", path, raw, content_type=content_type,
                           HTTP_IDEMPOTENCY_KEY=key)
    return api.post(path, body, format="json", HTTP_IDEMPOTENCY_KEY=key)


def refused_without_effect(api, path, body=None, *, status=400, code="VALIDATION_ERROR",
                           **send_options) -> dict:
    before = world()
    details = assert_refused(send(api, path, body, **send_options), status, code)
    assert world() == before
    return details


# --- the valid requests the cases start from ----------------------------------------------


@pytest.mark.parametrize("command", list(VALID))
def test_the_valid_request_every_case_starts_from_succeeds(api, targets, command):
    path, body = valid_request(targets, command)

    response = send(api, path, body)

    assert response.status_code in (200, 201), response.json()


# --- wrong fields, command by command -----------------------------------------------------

MONEY_CASES = ["-1", "-0.01", "0", "0.00", -5, "10000000000.00", 1e20, "1e30", "NaN", "nan",
               "Infinity", "-Infinity", "300.001", "0.001", "three hundred", "", "   ", None,
               True, ["300"], {"value": "300"}, DROP]
ID_CASES = ["", "   ", "x" * 65, "a\x00b", None, ["A"], {"id": "A"}, DROP]
VERSION_CASES = [0, -1, "two", "", None, 1.5, 2**31, 10**40, True, ["2"], DROP]


def cases(command, field, values):
    return [pytest.param(command, {field: v}, field, id=f"{command}-{field}-{v!r:.20}")
            for v in values]


FIELD_CASES = [
    *cases("lock", "order_amount", MONEY_CASES),
    *cases("lock", "order_id", ID_CASES),
    *cases("lock", "user_id", ["", "u" * 1000, "u\x00", None, DROP]),
    *cases("lock", "quote_id", ["q" * 65, "q\x00", None]),
    *cases("lock", "lease_seconds", [0, -1, "soon", 1.5, 90 * 24 * 3600 + 1, 10**30, None]),
    *cases("lock", "lease_until", ["tomorrow", "2026-13-01T00:00:00Z", 12345, "", None,
                                   "0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-05:00"]),
    *cases("renew", "expected_version", VERSION_CASES),
    *cases("renew", "lock_token", ["", "t" * 129, "tok\x00en", None, DROP]),
    *cases("renew", "order_id", ID_CASES),
    *cases("renew", "lease_seconds", [0, "x", 10**9]),
    *cases("redeem", "expected_version", VERSION_CASES),
    *cases("redeem", "lock_token", ["", "t" * 129, None, DROP]),
    *cases("redeem", "payment_id", ["", "p" * 65, "p\x00", None, DROP]),
    *cases("release", "expected_version", VERSION_CASES),
    *cases("release", "reason", ["r" * 501, "r\x00", None]),
    *cases("void", "expected_version", VERSION_CASES),
    *cases("void", "reason", ["", "r" * 501, "r\x00", None, DROP]),
    *cases("issue", "template_id", [0, -1, "abc", 1.5, 2**63, int(HUGE), None, DROP]),
    *cases("issue", "user_id", ["", "u" * 65, "u\x00", None, DROP]),
    *cases("template", "code", ["has space", "", "c" * 65, "ü/..", DROP]),
    *cases("template", "name", ["n" * 201, "", "n\x00", DROP]),
    *cases("template", "kind", ["FREE", "", None, DROP]),
    *cases("template", "face_value", ["-1", "NaN", "1.234", "1e13", "abc"]),
    *cases("template", "percent_off", ["100.01", "0", "-3", "abc", "1.234"]),
    *cases("template", "max_discount", ["-1", "NaN"]),
    *cases("template", "min_order_amount", ["-0.01", "Infinity"]),
    *cases("template", "valid_days", [0, -1, 3651, "x", 1.5]),
    *cases("template", "valid_from", ["garbage", "2026-02-30T00:00:00Z"]),
    *cases("template", "valid_until", ["9999-12-31T23:59:59-05:00", 0]),
    *cases("template", "expiry_during_lock", ["NEVER", ""]),
    *cases("template", "returnable", ["maybe", 2, None]),
    # A number where the schema says text: refused, never read as "0" (DRF's CharField would).
    *cases("lock", "order_id", [0]), *cases("lock", "user_id", [0]),
    *cases("lock", "quote_id", [7]), *cases("renew", "lock_token", [0]),
    *cases("redeem", "payment_id", [0]), *cases("release", "reason", [0]),
    *cases("void", "reason", [0]), *cases("issue", "user_id", [0]),
    *cases("template", "code", [42]), *cases("template", "name", [42]),
]


@pytest.mark.parametrize(("command", "changes", "field"), FIELD_CASES)
def test_a_wrong_field_is_a_validation_error_that_changes_nothing(api, targets, command,
                                                                  changes, field):
    path, body = valid_request(targets, command, changes)

    details = refused_without_effect(api, path, body)

    assert field in details, details


@pytest.mark.parametrize("command", ["lock", "renew"])
def test_lease_seconds_and_lease_until_together_are_refused(api, targets, command):
    path, body = valid_request(targets, command,
                               {"lease_seconds": 60, "lease_until": "2026-06-01T13:00:00Z"})

    details = refused_without_effect(api, path, body)

    assert details == {"non_field_errors": ["Give lease_seconds or lease_until, not both."]}


@pytest.mark.parametrize("command", ["lock", "renew"])
@pytest.mark.parametrize(
    "lease_until",
    ["2026-06-01T11:59:59Z", "2026-06-01T12:00:00Z", "2026-06-01T20:00:00+09:00",
     "2026-09-01T00:00:00Z"],
    ids=["past", "now", "past-in-another-zone", "beyond-the-longest-lease"],
)
def test_a_lease_that_ends_in_the_past_or_too_late_is_refused(api, targets, command,
                                                               lease_until):
    path, body = valid_request(targets, command, {"lease_until": lease_until})

    details = refused_without_effect(api, path, body)

    assert set(details) == {"lease_until", "longest"}
    assert CommandRejection.objects.get().error_code == "VALIDATION_ERROR"


@pytest.mark.parametrize(
    ("changes", "field"),
    [({"face_value": None}, "face_value"), ({"face_value": DROP}, "face_value"),
     ({"valid_days": DROP}, "valid_until"), ({"valid_until": "2026-07-01T00:00:00Z"},
                                             "valid_until"),
     ({"kind": "PERCENT_OFF"}, "percent_off"),
     ({"valid_days": None, "valid_from": "2026-07-02T00:00:00Z",
       "valid_until": "2026-07-01T00:00:00Z"}, "valid_from")],
    ids=["no-value", "value-missing", "no-validity", "window-and-days", "percent-missing",
         "backwards-window"],
)
def test_template_terms_that_cannot_price_an_order_are_refused(api, targets, changes, field):
    path, body = valid_request(targets, "template", changes)

    assert field in refused_without_effect(api, path, body)


def test_fields_that_are_not_inputs_are_ignored(api, targets):
    path, body = valid_request(targets, "lock")
    body |= {"status": "USED", "state_version": 99, "lock_token": "mine", "discount_amount": "1"}

    answer = send(api, path, body).json()

    assert (answer["status"], answer["state_version"]) == ("LOCKED", 2)
    assert answer["lock_token"] != "mine" and answer["discount_amount"] == "30.00"


def test_a_version_that_fits_but_is_wrong_is_a_conflict_not_a_crash(api, targets):
    path, body = valid_request(targets, "redeem", {"expected_version": 2**31 - 1})

    details = refused_without_effect(api, path, body, status=409, code="VERSION_CONFLICT")

    assert details["current_version"] == 2


# --- unknown ids --------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["lock", "renew", "redeem", "release", "void"])
@pytest.mark.parametrize("coupon_id", ["0", "424242", "999999999999999999"])
def test_a_command_for_an_unknown_coupon_is_404(api, targets, command, coupon_id):
    path, body = valid_request(targets, command)
    path = path.replace(f"/{targets.locked}/", f"/{coupon_id}/").replace(
        f"/{targets.available}/", f"/{coupon_id}/")

    details = refused_without_effect(api, path, body, status=404, code="NOT_FOUND")

    assert details == {"coupon_id": int(coupon_id)}


@pytest.mark.parametrize("template_id", [424242, 2**63 - 1])
def test_issue_from_an_unknown_template_is_404(api, targets, template_id):
    path, body = valid_request(targets, "issue", {"template_id": template_id})

    details = refused_without_effect(api, path, body, status=404, code="NOT_FOUND")

    assert details == {"template_id": template_id}


SUFFIXES = ["", "/operations", "/rejections", "/check", "/lock", "/renew", "/redeem",
            "/release", "/void"]


def path_request(api, coupon_id, suffix):
    path = f"/api/v1/coupons/{coupon_id}{suffix}"
    return api.get(path) if suffix in ("", "/operations", "/rejections", "/check") else (
        send(api, path, {"expected_version": 1, "reason": "x"}))


@pytest.mark.parametrize("coupon_id", [HUGE, "-1", "abc", "1.5", "0x10", "1e3"])
@pytest.mark.parametrize("suffix", SUFFIXES)
def test_a_path_id_that_is_not_a_database_id_is_404(api, targets, coupon_id, suffix):
    before = world()

    response = path_request(api, coupon_id, suffix)

    assert_refused(response, 404, "NOT_FOUND")
    assert world() == before


# Whitespace or a control character in an id is a 400 wherever the id is.
@pytest.mark.parametrize("coupon_id", ["%00", "1%00", "%201"])
@pytest.mark.parametrize("suffix", SUFFIXES)
def test_a_path_id_with_a_control_character_is_400(api, targets, coupon_id, suffix):
    before = world()

    response = path_request(api, coupon_id, suffix)

    assert_refused(response, 400, "VALIDATION_ERROR")
    assert world() == before


@pytest.mark.parametrize("template_id", [HUGE, "0", "-1", "abc"])
def test_an_unknown_template_path_is_404(api, targets, template_id):
    assert_refused(api.get(f"/api/v1/templates/{template_id}"), 404, "NOT_FOUND")


# --- bodies that are not a JSON object ----------------------------------------------------

RAW_BODIES = {
    "malformed": "{", "trailing-comma": '{"order_id": "A",}', "list": "[]",
    "list-of-objects": '[{"order_id": "A"}]', "string": '"lock it"', "number": "42",
    "null": "null", "true": "true", "empty": "", "nan-literal": '{"order_amount": NaN}',
    "infinity-literal": '{"expected_version": Infinity}', "deeply-nested": "[" * 100_000,
    "not-utf8": b"\xff\xfe{}", "single-quotes": "{'order_id': 'A'}",
}


@pytest.mark.parametrize("command", list(VALID))
@pytest.mark.parametrize("raw", list(RAW_BODIES.values()), ids=list(RAW_BODIES))
def test_a_body_that_is_not_a_json_object_is_a_validation_error(api, targets, command, raw):
    path, _ = valid_request(targets, command)

    refused_without_effect(api, path, raw=raw)


@pytest.mark.parametrize("command", ["lock", "redeem", "template"])
def test_an_oversized_body_is_refused_as_too_large(api, targets, command, settings):
    path, body = valid_request(targets, command)
    body["padding"] = "x" * 3_000_000

    details = refused_without_effect(api, path, raw=json.dumps(body), status=413,
                                     code="REQUEST_TOO_LARGE")

    assert details == {"max_bytes": settings.DATA_UPLOAD_MAX_MEMORY_SIZE}


@pytest.mark.parametrize("field", ["order_id", "user_id"])
def test_an_oversized_string_is_a_validation_error(api, targets, field):
    path, body = valid_request(targets, "lock", {field: "x" * 100_000})

    assert field in refused_without_effect(api, path, body)


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded",
                                          "multipart/form-data; boundary=x", "application/xml"])
def test_a_body_that_is_not_json_is_unsupported(api, targets, content_type):
    path, _ = valid_request(targets, "lock")

    refused_without_effect(api, path, raw="order_id=A", content_type=content_type,
                           status=415, code="UNSUPPORTED_MEDIA_TYPE")


# --- the Idempotency-Key header -----------------------------------------------------------


@pytest.mark.parametrize("key", ["k" * 256, "k\x00y", "k\x01", "k\x7f", "line\nbreak"],
                         ids=["too-long", "nul", "control", "delete", "newline"])
def test_an_unusable_idempotency_key_is_a_validation_error(api, targets, key):
    path, body = valid_request(targets, "lock")

    refused_without_effect(api, path, body, key=key)

    assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["setup-lock"]


def test_the_longest_idempotency_key_is_accepted(api, targets):
    path, body = valid_request(targets, "lock")

    assert send(api, path, body, key="k" * 255).status_code == 200


def test_a_missing_key_is_reported_before_a_bad_body(api, targets):
    path, _ = valid_request(targets, "lock")
    before = world()

    response = api.generic("POST", path, "{", content_type="application/json")

    assert_refused(response, 400, "IDEMPOTENCY_KEY_MISSING")
    assert world() == before


def test_bad_input_leaves_no_idempotency_claim_so_a_corrected_retry_runs(api, targets):
    path, body = valid_request(targets, "lock", {"order_amount": "-1"})
    refused_without_effect(api, path, body, key="quote-9")

    path, body = valid_request(targets, "lock")
    assert send(api, path, body, key="quote-9").status_code == 200


@pytest.mark.parametrize("quoted", ['"order-7"', '  "order-7" '])
def test_a_quoted_key_and_its_bare_value_are_one_key(api, targets, quoted):
    """The draft's Structured Field string and the bare value clients sent before it."""
    path, body = valid_request(targets, "issue")
    first = send(api, path, body, key="order-7")
    again = send(api, path, body, key=quoted)

    assert (first.status_code, again.status_code) == (201, 201)
    assert again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert list(IdempotencyRecord.objects.values_list("key", flat=True).order_by("key")) == [
        "order-7", "setup-lock"]


def test_a_quoted_key_unescapes_a_quote_and_a_backslash(api, targets):
    path, body = valid_request(targets, "issue")

    assert send(api, path, body, key=r'"a\"b\\c"').status_code == 201
    assert IdempotencyRecord.objects.filter(key='a"b\\c').exists()


@pytest.mark.parametrize("key", ['"open', '"a"b"', r'"bad\escape"', '"a" "b"'],
                         ids=["unterminated", "inner-quote", "bad-escape", "two-strings"])
def test_a_malformed_quoted_key_is_a_validation_error(api, targets, key):
    path, body = valid_request(targets, "lock")

    details = refused_without_effect(api, path, body, key=key)

    assert list(details) == ["Idempotency-Key"] and details["Idempotency-Key"][0]


@pytest.mark.parametrize("key", ["k" * 256, "clé-1"], ids=["too-long", "not-ascii"])
def test_a_key_refused_for_its_length_or_characters_names_the_header(api, targets, key):
    path, body = valid_request(targets, "lock")

    details = refused_without_effect(api, path, body, key=key)

    assert list(details) == ["Idempotency-Key"] and details["Idempotency-Key"][0]


@pytest.mark.parametrize("item", ['"order-8";v=1', '"order-8"; a; b=?1; c="x"; d=1.5; e=tok',
                                  '"order-8";f=:aGk=:;g=@1700000000'])
def test_a_key_as_a_structured_field_item_with_parameters_is_its_string(api, targets, item):
    """RFC 9651 3.1.2: an Item's parameters annotate it; the key is still the string."""
    path, body = valid_request(targets, "issue")
    first = send(api, path, body, key="order-8")
    again = send(api, path, body, key=item)

    assert (first.status_code, again.status_code) == (201, 201)
    assert again["Idempotent-Replayed"] == "true"


@pytest.mark.parametrize("item", ['"order-8";V=1', '"order-8";v=', '"order-8";v="open',
                                  '"order-8",v=1'])
def test_a_key_with_malformed_parameters_is_refused_naming_the_header(api, targets, item):
    path, body = valid_request(targets, "lock")

    details = refused_without_effect(api, path, body, key=item)

    assert "parameters" in details["Idempotency-Key"][0]


def test_an_empty_quoted_key_is_a_missing_key(api, targets):
    path, body = valid_request(targets, "lock")

    refused_without_effect(api, path, body, key='""', code="IDEMPOTENCY_KEY_MISSING")


@pytest.mark.parametrize("path", ["coupons", "coupons/{available}", "coupons/{available}/lock",
                                  "events", "cases", "templates"])
@pytest.mark.parametrize("caller", ["anonymous", "no-grants", "all-grants"])
def test_options_is_405_on_every_path_for_every_caller(api, targets, path, caller):
    """Not part of the API: no metadata naming views or serializers, and no 403 that tells one
    path from another; without a key it is the 401 of every path."""
    client = {"anonymous": APIClient(), "all-grants": api}.get(caller)
    if client is None:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION="Token " + service_client_create(name="bare")[1])

    answer = client.options("/api/v1/" + path.format(**vars(targets)))

    if caller == "anonymous":
        assert_refused(answer, 401, "NOT_AUTHENTICATED")
    else:
        assert_refused(answer, 405, "METHOD_NOT_ALLOWED")
        assert "OPTIONS" not in answer["Allow"]
    assert b"Serializer" not in answer.content and b"Api" not in answer.content
