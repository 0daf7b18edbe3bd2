"""Closed sets are enums in the schema, so a generated client's `op.op_type === "REDEME"` does
not compile, and the names generated types have stay as they were."""

import pytest
from rest_framework.test import APIClient

from coupons.models import CouponStatus, FactType, OperationType
from refunds.models import RefundCoupon

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def schemas(django_db_blocker):
    with django_db_blocker.unblock():
        return APIClient().get("/api/v1/schema/?format=json").json()["components"]["schemas"]


def ref(name):
    return {"$ref": f"#/components/schemas/{name}"}


@pytest.mark.parametrize(("component", "field", "declared"), [
    ("OperationOutput", "to_state", ref("CouponStatusEnum")),
    ("OperationOutput", "from_state",
     {"oneOf": [ref("CouponStatusEnum"), ref("BlankEnum")]}),  # "" on the ISSUE row
    ("ProofOperationOutput", "to_state", ref("CouponStatusEnum")),
    ("CaseOutput", "fact_type", ref("FactTypeEnum")),
    ("RefundDetailsOutput", "type", ref("RefundTypeEnum")),
])
def test_a_closed_set_is_declared_as_its_enum(schemas, component, field, declared):
    assert schemas[component]["properties"][field] == declared


def test_a_refusals_code_is_the_error_code_set_open_to_later_codes(schemas):
    known, unknown = schemas["RejectionOutput"]["properties"]["error_code"]["anyOf"]

    assert known == ref("ErrorCodeEnum")
    assert unknown["pattern"] == "^[A-Z][A-Z0-9_]*$"


@pytest.mark.parametrize("component", ["OperationOutput", "ProofOperationOutput"])
def test_a_ledger_rows_kind_is_the_operation_set_open_to_later_kinds(schemas, component):
    known, unknown = schemas[component]["properties"]["op_type"]["anyOf"]

    assert known == ref("OperationTypeEnum")
    assert unknown["pattern"] == "^[A-Z][A-Z0-9_]*$"


def test_a_nullable_closed_set_is_its_enum_or_null(schemas):
    for component, field, enum in [("CheckOutput", "replayed_state", "CouponStatusEnum"),
                                   ("RefundDecisionOutput", "executed_action",
                                    "RefundCouponDecisionOutputActionEnum")]:
        branches = schemas[component]["properties"][field]["oneOf"]
        # Wrapped, so openapi-generator keeps the component (api.schema.tidy_schema).
        assert branches[0] == {"allOf": [ref(enum)]}
        assert branches[1]["enum"] == [None]


@pytest.mark.parametrize(("field", "enum"), [
    ("action", "RefundCouponDecisionOutputActionEnum"),
    ("status", "RefundDecisionOutputStatusEnum")])
def test_a_refund_outcomes_decisions_are_typed_by_after_sales_enums(schemas, field, enum):
    """The core's outcome names after-sale's sets by their components, without importing them."""
    declared = schemas["DecisionSummary"]["properties"][field]

    assert declared["allOf"] == [ref(enum)]
    assert schemas["RefundDecisionOutputStatusEnum"]["enum"] == RefundCoupon.Status.values


def test_each_enum_holds_the_values_the_code_writes(schemas):
    assert schemas["OperationTypeEnum"]["enum"] == OperationType.values
    assert schemas["CouponStatusEnum"]["enum"] == CouponStatus.values
    assert schemas["FactTypeEnum"]["enum"] == FactType.values
    assert schemas["RefundCouponDecisionOutputActionEnum"]["enum"] == RefundCoupon.Action.values
    assert schemas["OpTypeEnum"]["enum"] == ["REVERSE", "COMPENSATE"]  # a compensation's
