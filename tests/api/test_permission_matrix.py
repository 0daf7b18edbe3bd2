"""Who may call what: every API operation and every admin page, for every kind of caller.

API_MATRIX and ADMIN_MATRIX are the reviewed answer to "who may do what" (README). The walks
below fail when an endpoint or an admin model exists that the tables do not name, so a branch
that adds one must say here who may use it. An authorized caller sending an empty body gets a
400 (VALIDATION_ERROR or IDEMPOTENCY_KEY_MISSING): what matters is that it got past the check.
"""

import re
from decimal import Decimal
from unittest.mock import ANY

import pytest
from django.contrib import admin
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.urls import path as route

from api.permissions import required_capability
from coupons.capabilities import CLIENT_GRANTS, GROUPS
from coupons.capabilities import Capability as C
from coupons.models import FactType
from coupons.services import coupon_redeem
from coupons.services.cases import case_open
from coupons.services.goodwill import goodwill_propose
from operations.retention import retention_prune
from operations.scanners import scan_final_payment_windows, scan_presale_expiry
from refunds.models import ReturnPolicyVersion
from refunds.services.compensation_propose import compensation_propose
from refunds.services.refund_receive import refund_receive
from tests.api.roles import ROLES, machine, person, signed_in
from tests.conftest import ALL_GRANTS, lock
from tests.coupons.events.test_presale import (
    VALID_UNTIL,
    deposit,
    final_payment,
    issue,
    presale_template,
)
from tests.operations.reconciliation.conftest import closed_order_still_locked
from timeline.capabilities import CONSOLE_GROUPS

pytestmark = pytest.mark.django_db

API_MATRIX = {
    ("GET", "/api/v1/templates"): C.READ,
    ("POST", "/api/v1/templates"): C.MANAGE_TEMPLATES,
    ("GET", "/api/v1/templates/{template_id}"): C.READ,
    ("GET", "/api/v1/coupons"): C.READ,
    ("POST", "/api/v1/coupons"): C.ISSUE,
    ("GET", "/api/v1/coupons/{coupon_id}"): C.READ,
    ("POST", "/api/v1/coupons/{coupon_id}/lock"): C.LOCK,
    ("POST", "/api/v1/coupons/{coupon_id}/renew"): C.RENEW,
    ("POST", "/api/v1/coupons/{coupon_id}/redeem"): C.REDEEM,
    ("POST", "/api/v1/coupons/{coupon_id}/release"): C.RELEASE,
    ("POST", "/api/v1/coupons/{coupon_id}/void"): C.VOID,
    ("GET", "/api/v1/coupons/{coupon_id}/operations"): C.READ,
    ("GET", "/api/v1/coupons/{coupon_id}/rejections"): C.READ,
    ("GET", "/api/v1/coupons/{coupon_id}/check"): C.READ,
    ("GET", "/api/v1/coupons/{coupon_id}/timeline"): C.READ,
    ("GET", "/api/v1/coupons/{coupon_id}/proof"): C.READ,
    ("POST", "/api/v1/events"): C.POST_FACTS,
    ("GET", "/api/v1/orders/{order_id}/final-payment-check"): C.READ,
    ("GET", "/api/v1/cases"): C.RESOLVE_CASES,
    ("POST", "/api/v1/cases/{case_id}/resolve"): C.RESOLVE_CASES,
    ("GET", "/api/v1/reconciliation"): C.RESOLVE_CASES,
    ("POST", "/api/v1/reconciliation/{finding_id}/resolve"): C.RESOLVE_CASES,
    ("PATCH", "/api/v1/templates/{template_id}"): C.MANAGE_TEMPLATES,
    ("POST", "/api/v1/coupons/{coupon_id}/operations/{operation_id}/compensate"):
        C.PROPOSE_COMPENSATION,
    ("GET", "/api/v1/compensations"): C.READ,
    ("GET", "/api/v1/compensations/{compensation_id}"): C.READ,
    ("POST", "/api/v1/compensations/{compensation_id}/approve"): C.APPROVE_COMPENSATION,
    ("POST", "/api/v1/compensations/{compensation_id}/reject"): C.APPROVE_COMPENSATION,
    ("GET", "/api/v1/return-policies"): C.READ,
    ("POST", "/api/v1/return-policies"): C.EDIT_POLICIES,
    ("GET", "/api/v1/return-policies/{policy_id}"): C.READ,
    ("GET", "/api/v1/return-policies/{policy_id}/versions"): C.READ,
    ("POST", "/api/v1/return-policies/{policy_id}/versions"): C.EDIT_POLICIES,
    ("GET", "/api/v1/return-policies/{policy_id}/versions/{number}"): C.READ,
    ("PATCH", "/api/v1/return-policies/{policy_id}/versions/{number}"): C.EDIT_POLICIES,
    ("POST", "/api/v1/return-policies/{policy_id}/versions/{number}/publish"): C.EDIT_POLICIES,
    ("POST", "/api/v1/return-policies/{policy_id}/versions/{number}/preview"): C.EDIT_POLICIES,
    ("GET", "/api/v1/refunds"): C.READ,
    ("POST", "/api/v1/refunds"): C.SEND_REFUNDS,
    ("GET", "/api/v1/refunds/{decision_id}"): C.READ,
    ("POST", "/api/v1/refunds/{decision_id}/approve"): C.APPROVE_REFUNDS,
    ("POST", "/api/v1/refunds/{decision_id}/reject"): C.APPROVE_REFUNDS,
    ("GET", "/api/v1/goodwill"): C.READ,
    ("POST", "/api/v1/goodwill"): C.PROPOSE_GOODWILL,
    ("GET", "/api/v1/goodwill/{goodwill_id}"): C.READ,
    ("POST", "/api/v1/goodwill/{goodwill_id}/approve"): C.APPROVE_GOODWILL,
    ("POST", "/api/v1/goodwill/{goodwill_id}/reject"): C.APPROVE_GOODWILL,
}

# The API's documents, beside its operations: who gets each, signed out.
PUBLIC, SIGN_IN_PAGE = "public", "the sign-in page first"
DOCUMENTS = {
    "/api/v1/schema/": PUBLIC,  # generators fetch the OpenAPI schema without a key
    "/api/v1/asyncapi/": PUBLIC,  # and the broker's contract beside it
    "/api/v1/errors/": PUBLIC,  # the error reference each problem details' `type` names
    "/api/v1/docs/": SIGN_IN_PAGE,  # pages for people
    "/api/v1/redoc/": SIGN_IN_PAGE,
}

SUPERUSER = "superuser only"
# model → (who may view, who may add, who may change); None: nobody, not even a superuser.
ADMIN_MATRIX = {
    "coupons.coupontemplate": (C.READ, C.MANAGE_TEMPLATES, C.MANAGE_TEMPLATES),
    "coupons.coupontemplateversion": (C.READ, None, None),
    "coupons.usercoupon": (C.READ, None, None),
    "coupons.couponlock": (C.READ, None, None),
    "coupons.ordercoupon": (C.READ, None, None),
    "coupons.redemption": (C.READ, None, None),
    "coupons.couponoperation": (C.READ, None, None),
    "coupons.commandrejection": (C.READ, None, None),
    "coupons.outboxevent": (C.READ, None, None),
    "coupons.idempotencyrecord": (C.READ, None, None),
    "coupons.serviceclient": (SUPERUSER, None, SUPERUSER),
    "coupons.inboxmessage": (C.READ, None, None),
    "coupons.orderfact": (C.READ, None, None),
    "coupons.conflictcase": (C.READ, None, None),
    "coupons.presalesettlement": (C.READ, None, None),
    "coupons.expirywarning": (C.READ, None, None),
    "coupons.finalpaymentreminder": (C.READ, None, None),
    # Reconciliation's and retention's records: resolved through the services, never here.
    "coupons.finding": (C.READ, None, None),
    "coupons.reconciliationrun": (C.READ, None, None),
    "coupons.prunerun": (C.READ, None, None),
    "refunds.compensation": (C.READ, None, None),
    "refunds.refundcoupon": (C.READ, None, None),
    # Policies are added and drafts edited through the services; a published version never
    # changes (tests/refunds/policies/test_policy_admin.py covers the draft and publish paths).
    "refunds.returnpolicy": (C.READ, C.EDIT_POLICIES, None),
    # The row checked is the default policy's published version 1: read only for everyone.
    "refunds.returnpolicyversion": (C.READ, None, None),
}
# POSTs that change nothing, so an empty body is a complete request.
READ_ONLY_POSTS = {("POST", "/api/v1/return-policies/{policy_id}/versions/{number}/preview")}

PEOPLE = [*ROLES, "superuser", "staff without a group"]
API_CALLERS = ["anonymous", *PEOPLE, "client without grants", "client with the grant"]
ACCEPTED_EMPTY_BODY_CODES = {"VALIDATION_ERROR", "IDEMPOTENCY_KEY_MISSING"}


def holds(caller: str, capability) -> bool:
    """Whether `caller` holds `capability` (or SUPERUSER); roles come from the group table."""
    if capability is None or caller in ("anonymous", "staff without a group",
                                        "client without grants"):
        return False
    if caller == "superuser":
        return True
    if capability == SUPERUSER:
        return False
    if caller == "client with the grant":
        return grantable(capability)
    return capability in GROUPS[caller]


def grantable(capability) -> bool:
    return capability == C.POST_FACTS or capability in CLIENT_GRANTS.values()


def matrix_markdown() -> str:
    """The two tables as Markdown, for release notes (see the docs/api.md)."""
    def mark(caller, capability, absent="—"):
        if capability is not None and capability != SUPERUSER and caller.startswith("client") \
                and not grantable(capability):
            return absent
        return "yes" if holds(caller, capability) else "no"

    callers = [c for c in API_CALLERS if c != "anonymous"]
    lines = ["| operation | capability | " + " | ".join(callers) + " |",
             "|---|---|" + "---|" * len(callers)]
    lines += [f"| {method} `{path}` | `{capability.value}` | "
              + " | ".join(mark(c, capability, "no (not grantable)") for c in callers) + " |"
              for (method, path), capability in API_MATRIX.items()]
    lines += ["", "Anonymous callers get 401 everywhere.", "",
              "| admin model | view | add | change |", "|---|---|---|---|"]
    for label, rights in ADMIN_MATRIX.items():
        names = [getattr(right, "value", right) or "nobody" for right in rights]
        lines.append(f"| `{label}` | " + " | ".join(names) + " |")
    return "\n".join(lines)


# --- the walks --------------------------------------------------------------------------------


def routed_api(patterns=None, prefix=""):
    """(route, view class or None) of every URL under /api/v1/ in the URLconf; None where the
    view is not an API operation of ours (a plain view, drf-spectacular's)."""
    for entry in get_resolver().url_patterns if patterns is None else patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from routed_api(entry.url_patterns, route)
        elif isinstance(entry, URLPattern) and route.startswith("api/v1/"):
            view = getattr(entry.callback, "cls", None)
            ours = view is not None and not view.__module__.startswith("drf_spectacular")
            yield route, view if ours else None


def routed_operations():
    """(method, OpenAPI-style path, view class) of every API view method in the URLconf."""
    for pattern, view in routed_api():
        if view is None:
            continue
        path = "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", pattern)
        for method in ("get", "post", "put", "patch", "delete"):
            if hasattr(view, method):
                yield method.upper(), path, view


def test_the_api_matrix_names_every_routed_operation_and_agrees_with_its_view():
    routed = {(method, path): view for method, path, view in routed_operations()}

    assert ("POST", "/api/v1/coupons/{coupon_id}/redeem") in routed  # the walk found the API
    assert set(routed) - set(API_MATRIX) == set(), "add these operations to API_MATRIX"
    assert set(API_MATRIX) - set(routed) == set(), "these operations are no longer routed"
    assert {key: required_capability(view, key[0]) for key, view in routed.items()} == API_MATRIX


def routed_documents(patterns=None):
    """Paths under /api/v1/ served by something other than an API operation of ours."""
    return ["/" + pattern for pattern, view in routed_api(patterns) if view is None]


def test_the_documents_table_names_every_other_api_path():
    assert set(routed_documents()) == set(DOCUMENTS)


@pytest.mark.parametrize("path", DOCUMENTS)
def test_each_document_answers_a_signed_out_caller_as_the_table_says(client, path):
    response = client.get(path)

    if DOCUMENTS[path] == PUBLIC:
        assert response.status_code == 200
    else:
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("console:login"))


def test_the_documents_walk_fails_on_a_path_the_table_does_not_name():
    unnamed = route("api/v1/forgotten/", lambda request: None)
    assert "/api/v1/forgotten/" in set(routed_documents([unnamed]))
    assert "/api/v1/forgotten/" not in DOCUMENTS


def test_the_admin_matrix_names_every_registered_model():
    registered = {model._meta.label_lower for model in admin.site._registry}

    assert "coupons.couponoperation" in registered
    assert registered - {"auth.user", "auth.group"} == set(ADMIN_MATRIX)


def test_the_migrated_groups_hold_exactly_the_capabilities_of_the_table():
    held = {
        group.name: sorted(group.permissions.values_list("codename", flat=True))
        for group in Group.objects.filter(name__in=ROLES)
    }

    # The domain's capabilities and the console's own (timeline.capabilities).
    assert held == {name: sorted(c.value for c in [*caps, *CONSOLE_GROUPS[name]])
                    for name, caps in GROUPS.items()}


# --- the API ----------------------------------------------------------------------------------


@pytest.fixture
def objects(coupon, ctx):
    case = case_open(coupon=coupon, order_id="A", fact_type=FactType.PAYMENT_SUCCEEDED,
                     evidence={})
    _, proof = lock(coupon, ctx, order_id="R")
    coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id="P-R", ctx=ctx)
    redeem = coupon.operations.get(op_type="REDEEM")
    decision = refund_receive(refund_id="r-1", order_id="R", payment_id="P-R",
                              refund_amount=Decimal("10.00"), refund_type="PARTIAL",
                              ctx=ctx).decisions[0]
    proposal = compensation_propose(coupon_id=coupon.pk, operation_id=redeem.pk,
                                    reason="wrong redeem", ctx=ctx)
    version = ReturnPolicyVersion.objects.get(policy__code="default", number=1)
    finding = closed_order_still_locked(coupon.template, ctx)
    goodwill = goodwill_propose(template_id=coupon.template_id, coupon_id=coupon.pk,
                                answers="R", reason="cold food", ctx=ctx)
    return {"goodwill_id": goodwill.pk,
            "coupon_id": coupon.pk, "template_id": coupon.template_id, "case_id": case.pk,
            "order_id": "R",
            "finding_id": finding.pk, "operation_id": redeem.pk, "decision_id": decision.pk,
            "compensation_id": proposal.pk, "policy_id": version.policy_id,
            "number": version.number}


def api_caller(caller: str, capability):
    if caller == "anonymous":
        return Client()
    if caller == "client without grants":
        return machine("no-grants")
    if caller == "client with the grant":
        if capability == C.POST_FACTS:
            return machine("one-fact", fact_types=[FactType.ORDER_CLOSED])
        if grantable(capability):
            return machine("one-grant", capabilities=[capability])
        return machine("every-grant", **ALL_GRANTS)  # and still refused: people's decisions
    if caller == "superuser":
        return signed_in(person("root", superuser=True))
    group = None if caller == "staff without a group" else caller
    return signed_in(person(caller.replace(" ", "-"), group=group))


def api_outcome(response) -> str:
    if response.status_code in (401, 403):
        error = response.json()["error"]
        return f"{response.status_code} {error['details'].get('capability', error['code'])}"
    if response.status_code == 400:
        code = response.json()["error"]["code"]
        return "400" if code in ACCEPTED_EMPTY_BODY_CODES else f"400 {code}"
    return "2xx" if 200 <= response.status_code < 300 else str(response.status_code)


def expected_api_outcome(caller: str, operation, capability) -> str:
    if caller == "anonymous":
        return "401 NOT_AUTHENTICATED"
    if not holds(caller, capability):
        return f"403 {capability.value}"
    return "2xx" if operation[0] == "GET" or operation in READ_ONLY_POSTS else "400"


@pytest.mark.parametrize("operation", API_MATRIX, ids=" ".join)
def test_each_caller_gets_past_an_api_check_only_with_the_capability(operation, objects):
    method, path = operation
    capability = API_MATRIX[operation]
    url = path.format(**objects)
    observed, expected = {}, {}
    for caller in API_CALLERS:
        client = api_caller(caller, capability)
        response = (client.get(url) if method == "GET"
                    else getattr(client, method.lower())(url, {},
                                                         content_type="application/json"))
        observed[caller] = api_outcome(response)
        expected[caller] = expected_api_outcome(caller, operation, capability)

    assert observed == expected


# --- the admin --------------------------------------------------------------------------------


@pytest.fixture
def history(objects, send, ctx, clock):
    """At least one row of every model the admin shows."""
    retention_prune()  # first, so it removes nothing the other rows need
    coupon = issue(presale_template("plain"))
    _, proof = lock(coupon, ctx, order_id="B", amount="400.00")
    coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id="P-B", ctx=ctx)
    voider = machine("voider", capabilities=[C.VOID])
    refused = voider.post(f"/api/v1/coupons/{coupon.pk}/void",
                          {"expected_version": 1, "reason": "x"}, format="json",
                          HTTP_IDEMPOTENCY_KEY="stale")
    assert refused.status_code == 409  # a refusal, logged and kept with its key
    presale = issue(presale_template("presale", "SUBSTITUTE"))
    deposit(send, presale)
    scan_presale_expiry()  # its coupon lapses before the final payment: an expiry warning
    scan_final_payment_windows()  # the window opened with the deposit: a reminder
    clock.set(VALID_UNTIL)
    final_payment(send)  # and no substitute: a settlement and a compensation


def admin_person(caller: str):
    if caller == "superuser":
        return person("root", superuser=True)
    return person(caller.replace(" ", "-"), group=None if " " in caller else caller)


def page_outcome(response, permission="has_change_permission"):
    if response.status_code == 302 and response["Location"].startswith("/admin/login/"):
        return "login"
    if response.status_code == 200 and permission in response.context:
        return "edit" if response.context[permission] else "view"
    return response.status_code


def admin_outcomes(client, model) -> dict:
    info = model._meta.app_label, model._meta.model_name
    obj = model.objects.order_by("pk").first()
    assert obj is not None, f"the history fixture makes no {model._meta.label}"
    change_url = reverse("admin:{}_{}_change".format(*info), args=[obj.pk])
    change = page_outcome(client.get(change_url))
    before = list(model.objects.order_by("pk").values())
    saved = client.post(change_url, {})  # permitted saves are the services' tests
    unchanged = list(model.objects.order_by("pk").values()) == before
    return {
        "list": page_outcome(client.get(reverse("admin:{}_{}_changelist".format(*info)))),
        "add": page_outcome(client.get(reverse("admin:{}_{}_add".format(*info))),
                            "has_add_permission"),
        "change": change,
        "save": (page_outcome(saved) if page_outcome(saved) in ("login", 403) else "allowed",
                 "unchanged" if unchanged else "changed"),
    }


def expected_admin_outcomes(caller, view, add, change) -> dict:
    if caller == "anonymous":
        return {"list": "login", "add": "login", "change": "login",
                "save": ("login", "unchanged")}
    may_change = holds(caller, change)
    return {
        "list": 200 if holds(caller, view) else 403,
        "add": "edit" if holds(caller, add) else 403,
        "change": "edit" if may_change else "view" if holds(caller, view) else 403,
        "save": ("allowed", ANY) if may_change else (403, "unchanged"),
    }


@pytest.mark.parametrize("label", ADMIN_MATRIX)
def test_each_person_sees_and_changes_in_the_admin_only_what_the_capability_allows(
    label, history,
):
    model = next(m for m in admin.site._registry if m._meta.label_lower == label)
    observed, expected = {}, {}
    for caller in ["anonymous", *PEOPLE]:
        client = Client()
        if caller != "anonymous":
            client.force_login(admin_person(caller))
        observed[caller] = admin_outcomes(client, model)
        expected[caller] = expected_admin_outcomes(caller, *ADMIN_MATRIX[label])

    assert observed == expected
