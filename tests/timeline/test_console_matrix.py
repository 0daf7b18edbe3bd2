"""Every console page and action × anonymous, a service token, support, operator, policy_admin.

Each routed console URL must have a row here (the completeness test fails otherwise), so a new
page cannot ship without saying who may open it. Rows: (url name, method, kwargs builder,
{role: expected status}). `ok` stands for the page's success answer (200, or a redirect after
an action); anonymous visitors and service tokens always go to the sign-in page.
"""

import pytest
from django.contrib.auth.models import User
from django.urls import URLPattern, get_resolver, reverse

from coupons.models import CommandRejection
from coupons.services.goodwill import goodwill_propose
from refunds.models import ReturnPolicy
from refunds.services.policies import policy_create
from tests.operations.reconciliation.conftest import closed_order_still_locked
from tests.timeline import queue_objects
from timeline.models import SavedFilter
from timeline.notes import note_add

pytestmark = pytest.mark.django_db

OK, DENIED = "ok", 403
# Let in, but the matrix's empty form is bad input: answered in the page, nothing changes.
BAD_INPUT = 400
ROLES = ("support", "operator", "policy_admin")
EVERYONE = dict.fromkeys(ROLES, OK)
OPERATORS = {"support": DENIED, "operator": OK, "policy_admin": DENIED}
POLICY_ADMINS = {"support": DENIED, "operator": DENIED, "policy_admin": OK}
POLICY_ADMIN_FORMS = {**POLICY_ADMINS, "policy_admin": BAD_INPUT}
EVERYONE_FORMS = dict.fromkeys(ROLES, BAD_INPUT)
OPERATOR_FORMS = {**OPERATORS, "operator": BAD_INPUT}
# Support and operators propose goodwill coupons; operators decide them.
GOODWILL_PROPOSERS = {"support": OK, "operator": OK, "policy_admin": DENIED}
NOTE_WRITERS = {"support": BAD_INPUT, "operator": BAD_INPUT, "policy_admin": DENIED}
AUDITORS = {"support": DENIED, "operator": OK, "policy_admin": OK}
# Someone else's saved filter (or none) is not found, whoever asks.
NOT_YOURS = dict.fromkeys(ROLES, 404)

# Console URLs that are not pages behind a capability.
PUBLIC = {"login", "login_language", "logout"}

CONSOLE_MATRIX = [
    ("home", "GET", lambda objects: {}, EVERYONE),
    ("search", "GET", lambda objects: {}, EVERYONE),
    ("coupon", "GET", lambda objects: {"coupon_id": objects["coupon"].pk}, EVERYONE),
    # Support starts from the caller: everyone who reads coupons reads their customer's page.
    ("customer", "GET", lambda objects: {"user_id": objects["coupon"].user_id}, EVERYONE),
    # Support reads the queues but presses none of their buttons.
    ("cases", "GET", lambda objects: {}, EVERYONE),
    ("case_resolve", "POST", lambda objects: {"case_id": objects["case"].pk}, OPERATORS),
    ("approvals", "GET", lambda objects: {}, EVERYONE),
    ("decision_approve", "POST", lambda objects: {"decision_id": objects["decision"].pk},
     OPERATORS),
    ("decision_reject", "POST", lambda objects: {"decision_id": objects["decision"].pk},
     OPERATORS),
    ("compensations", "GET", lambda objects: {}, EVERYONE),
    ("compensation_propose", "GET", lambda objects: {}, OPERATORS),
    ("compensation_propose", "POST", lambda objects: {}, OPERATORS),
    ("compensation_approve", "POST",
     lambda objects: {"compensation_id": objects["compensation"].pk}, OPERATORS),
    ("compensation_reject", "POST",
     lambda objects: {"compensation_id": objects["compensation"].pk}, OPERATORS),
    ("policies", "GET", lambda objects: {}, EVERYONE),
    ("policy_new", "GET", lambda objects: {}, POLICY_ADMINS),
    ("policy_new", "POST", lambda objects: {}, POLICY_ADMIN_FORMS),
    ("policy", "GET", lambda objects: {"policy_id": objects["policy"].pk}, EVERYONE),
    ("policy_diff", "GET", lambda objects: {"policy_id": objects["policy"].pk}, EVERYONE),
    ("policy_draft_new", "POST", lambda objects: {"policy_id": objects["policy"].pk},
     POLICY_ADMINS),
    ("policy_version", "GET", lambda objects: objects["published"], EVERYONE),
    ("policy_version_edit", "GET", lambda objects: objects["draft"], POLICY_ADMINS),
    ("policy_version_edit", "POST", lambda objects: objects["draft"], POLICY_ADMIN_FORMS),
    # A replay is work for the server: policy admins only, as the API's preview.
    ("policy_version_impact", "GET", lambda objects: objects["draft"], POLICY_ADMINS),
    ("policy_version_publish", "POST", lambda objects: objects["draft"], POLICY_ADMIN_FORMS),
    ("coupon_timeline", "GET", lambda objects: {"coupon_id": objects["coupon"].pk}, EVERYONE),
    ("coupon_ledger", "GET", lambda objects: {"coupon_id": objects["coupon"].pk}, EVERYONE),
    ("reconciliation", "GET", lambda objects: {}, EVERYONE),
    ("reconciliation_resolve", "POST", lambda objects: {"finding_id": objects["finding"].pk},
     OPERATORS),
    # Anyone signed in sets their own language (the matrix's empty form names none: 400).
    ("language", "POST", lambda objects: {}, EVERYONE_FORMS),
    # Anyone signed in picks their own time zone (the empty form: follow the browser).
    ("time_zone", "GET", lambda objects: {}, EVERYONE),
    ("time_zone", "POST", lambda objects: {}, EVERYONE),

    # A team's console.
    ("note_add", "POST", lambda objects: {"coupon_id": objects["coupon"].pk}, NOTE_WRITERS),
    ("note", "GET", lambda objects: {"coupon_id": objects["coupon"].pk,
                                     "note_id": objects["note"].pk}, EVERYONE),
    ("activity", "GET", lambda objects: {}, AUDITORS),
    ("search_export", "GET", lambda objects: {}, OPERATORS),
    ("cases_export", "GET", lambda objects: {}, OPERATORS),
    ("approvals_export", "GET", lambda objects: {}, OPERATORS),
    ("compensations_export", "GET", lambda objects: {}, OPERATORS),
    ("case_bulk", "POST", lambda objects: {}, OPERATOR_FORMS),
    ("decision_bulk", "POST", lambda objects: {}, OPERATOR_FORMS),
    # Only approvers open the manual reviews' bulk form; an empty post is bad input.
    ("decision_manual_bulk", "GET", lambda objects: {}, OPERATORS),
    ("decision_manual_bulk", "POST", lambda objects: {}, OPERATOR_FORMS),
    ("filter_save", "POST", lambda objects: {}, EVERYONE),
    ("filter_delete", "POST", lambda objects: {"filter_id": objects["saved_filter"].pk},
     NOT_YOURS),
    ("goodwill", "GET", lambda objects: {}, EVERYONE),
    ("goodwill_propose", "GET", lambda objects: {}, GOODWILL_PROPOSERS),
    ("goodwill_propose", "POST", lambda objects: {}, GOODWILL_PROPOSERS),
    ("goodwill_approve", "POST", lambda objects: {"goodwill_id": objects["goodwill"].pk},
     OPERATORS),
    ("goodwill_reject", "POST", lambda objects: {"goodwill_id": objects["goodwill"].pk},
     OPERATORS),
]


def console_url_names():
    resolver = get_resolver()
    namespace = resolver.namespace_dict["console"][1]
    return {p.name for p in namespace.url_patterns if isinstance(p, URLPattern)}


def test_every_console_url_has_a_row():
    covered = {name for name, *_ in CONSOLE_MATRIX} | PUBLIC
    assert console_url_names() - covered == set()


@pytest.fixture
def objects(db, coupon, template, ctx):
    """Ids the matrix rows need (a coupon, a case, a pending decision...), made once per test."""
    default = ReturnPolicy.objects.get(code=ReturnPolicy.DEFAULT_CODE)
    # A policy whose first version is still a draft (the default one has none, so a new draft
    # of it can be made).
    drafted = policy_create(code="matrix", name="Matrix policy", actor="user:matrix")
    return {
        "coupon": coupon,
        "case": queue_objects.late_payment_case(queue_objects.fresh_coupon(template)),
        "decision": queue_objects.pending_decision(queue_objects.fresh_coupon(template)),
        "compensation": queue_objects.proposal(queue_objects.fresh_coupon(template)),
        "goodwill": goodwill_propose(template_id=template.pk, coupon_id=coupon.pk,
                                     answers="order-M", reason="matrix", ctx=ctx),
        "policy": default,
        "published": {"policy_id": default.pk, "number": 1},
        "draft": {"policy_id": drafted.pk, "number": 1},
        "finding": closed_order_still_locked(template, ctx),
        "note": note_add(coupon_id=coupon.pk, author="user:matrix", text="A note",
                         form_key="matrix-note"),
        "saved_filter": SavedFilter.objects.create(
            user=User.objects.create_user("filter-owner"), page="cases", name="open",
            query="status=open", created_at=coupon.issued_at),
    }


def call(client, method, url, **headers):
    return client.get(url, **headers) if method == "GET" else client.post(url, {}, **headers)


@pytest.mark.parametrize("name,method,kwargs,expected", CONSOLE_MATRIX,
                         ids=[f"{row[1]} {row[0]}" for row in CONSOLE_MATRIX])
def test_anonymous_and_service_tokens_go_to_sign_in(client, service_client, objects,
                                                    name, method, kwargs, expected):
    url = reverse(f"console:{name}", kwargs=kwargs(objects))
    _, key = service_client
    for headers in ({}, {"HTTP_AUTHORIZATION": f"Token {key}"}):
        answer = call(client, method, url, **headers)
        assert answer.status_code == 302, (url, headers)
        assert answer["Location"].startswith(reverse("console:login"))


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("name,method,kwargs,expected", CONSOLE_MATRIX,
                         ids=[f"{row[1]} {row[0]}" for row in CONSOLE_MATRIX])
def test_each_role_gets_its_answer(signed_in, objects, role, name, method, kwargs, expected):
    client = signed_in(role)
    answer = call(client, method, reverse(f"console:{name}", kwargs=kwargs(objects)))
    if expected[role] == OK:
        assert answer.status_code in (200, 302), answer.status_code
    else:
        assert answer.status_code == expected[role]
    denial_recorded = CommandRejection.objects.filter(
        op_type="CONSOLE", error_code="PERMISSION_DENIED").exists()
    assert denial_recorded is (expected[role] == DENIED)
