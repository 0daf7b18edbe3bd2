"""validate_rules: every problem named beside its field, rule by rule; valid rules stored whole."""

from decimal import Decimal

import pytest

from coupons.errors import ValidationFailed
from coupons.services import template_create
from refunds.policy_engine import CONDITIONS, clean_rules, validate_rules

DEFAULT = {"label": "default", "when": {}, "action": "KEEP_USED"}


def problems(*rules) -> dict:
    with pytest.raises(ValidationFailed) as caught:
        validate_rules([*rules, DEFAULT])
    assert caught.value.code == "VALIDATION_ERROR"
    return caught.value.details["rules"]


def when_problem(name, value) -> list:
    return problems({"label": "r", "when": {name: value}, "action": "RETURN"})["0"]["when"][name]


@pytest.mark.parametrize(("name", "value", "message"), [
    ("refund_type", "SOME", "must be one of FULL, PARTIAL"),
    ("refunded_share_min", 2, "must be between 0 and 1"),
    ("refunded_share_max", "-0.1", "must be between 0 and 1"),
    ("refunded_share_min", "half", "must be a number"),
    ("refunded_share_min", "NaN", "must be a number"),
    ("coupon_expired", "yes", "must be true or false"),
    ("template_kind", [], "must be a non-empty list of coupon kinds"),
    ("template_kind", "EXCHANGE", "must be a non-empty list of coupon kinds"),
    ("template_returnable", 1, "must be true or false"),
    ("campaign_closed", None, "must be true or false"),
    ("risk_flag", "true", "must be true or false"),
    ("days_since_redemption_max", 1.5, "must be a whole number of days between 0 and 36500"),
    ("days_since_redemption_min", -1, "must be a whole number of days between 0 and 36500"),
    ("days_since_redemption_max", True, "must be a whole number of days between 0 and 36500"),
    ("face_value_min", "-5", "must be zero or more"),
    ("face_value_max", [], "must be a number"),
])
def test_each_condition_refuses_a_bad_value_beside_its_name(name, value, message):
    assert when_problem(name, value) == [message]


def test_unknown_kind_names_the_kinds():
    (message,) = when_problem("template_kind", ["EXCHANGE", "GIFT"])
    assert message.startswith("unknown kinds ['GIFT']")


def test_unknown_condition_and_unknown_rule_key_are_refused():
    found = problems({"label": "r", "when": {"colour": "red"}, "action": "RETURN",
                      "priority": 1})["0"]

    assert found["priority"] == ["unknown key"]
    assert found["when"]["colour"][0].startswith("unknown condition")


@pytest.mark.parametrize("low", ["refunded_share", "days_since_redemption", "face_value"])
def test_a_minimum_above_its_maximum_is_refused(low):
    values = {"refunded_share": ("0.8", "0.2"), "days_since_redemption": (9, 3),
              "face_value": ("50", "10")}[low]
    when = {f"{low}_min": values[0], f"{low}_max": values[1]}

    found = problems({"label": "r", "when": when, "action": "RETURN"})["0"]["when"]

    assert found == {f"{low}_min": [f"must not exceed {low}_max"]}


@pytest.mark.parametrize(("rule", "field", "message"), [
    ({"when": {"risk_flag": True}, "action": "RETURN"}, "label",
     "required, 1 to 200 characters"),
    ({"label": "  ", "when": {"risk_flag": True}, "action": "RETURN"}, "label",
     "required, 1 to 200 characters"),
    ({"label": "x" * 201, "when": {"risk_flag": True}, "action": "RETURN"}, "label",
     "required, 1 to 200 characters"),
    ({"label": "r", "when": {"risk_flag": True}}, "action",
     "must be one of RETURN, KEEP_USED, VOID, COMPENSATE, MANUAL_REVIEW"),
    ({"label": "r", "when": {"risk_flag": True}, "action": "RETURN",
      "requires_approval": "no"}, "requires_approval", "must be true or false"),
    ({"label": "r", "when": ["risk_flag"], "action": "RETURN"}, "when",
     "must be an object of conditions"),
])
def test_rule_fields_are_checked(rule, field, message):
    assert problems(rule)["0"][field] == [message]


@pytest.mark.parametrize(("compensation", "expected"), [
    (None, ['give exactly one of {"template_id": id} or {"amount": "12.00"}']),
    ({}, ['give exactly one of {"template_id": id} or {"amount": "12.00"}']),
    ({"amount": "5.00", "template_id": 1},
     ['give exactly one of {"template_id": id} or {"amount": "12.00"}']),
    ({"coupon": 1}, ['give exactly one of {"template_id": id} or {"amount": "12.00"}']),
    ({"amount": "0"}, {"amount": ["must be above zero, with at most two decimal places"]}),
    ({"amount": "1.005"}, {"amount": ["must be above zero, with at most two decimal places"]}),
    ({"amount": 12.5}, {"amount": ['must be a decimal string such as "12.00"']}),
    ({"template_id": 999999}, {"template_id": ["no such coupon template"]}),
    ({"template_id": "1"}, {"template_id": ["no such coupon template"]}),
])
@pytest.mark.django_db
def test_compensate_needs_exactly_one_valid_compensation(compensation, expected):
    rule = {"label": "r", "when": {"risk_flag": True}, "action": "COMPENSATE"}
    if compensation is not None:
        rule["compensation"] = compensation

    assert problems(rule)["0"]["compensation"] == expected


def test_only_compensate_carries_a_compensation():
    found = problems({"label": "r", "when": {"risk_flag": True}, "action": "VOID",
                      "compensation": {"amount": "5.00"}})["0"]

    assert found["compensation"] == ["only a COMPENSATE rule gives a compensation"]


@pytest.mark.django_db
def test_valid_compensations_are_stored_in_canonical_form(clock):
    template = template_create(code="gift", name="Gift", kind="AMOUNT_OFF",
                               face_value=Decimal("5.00"), valid_days=30)

    rules = clean_rules([
        {"label": "coupon", "when": {"campaign_closed": True}, "action": "COMPENSATE",
         "compensation": {"template_id": template.pk}},
        {"label": "money", "when": {"risk_flag": False}, "action": "COMPENSATE",
         "compensation": {"amount": "7.5"}},
        DEFAULT,
    ])

    assert rules[0]["compensation"] == {"template_id": template.pk}
    assert rules[1]["compensation"] == {"amount": "7.50"}


def test_last_rule_must_be_the_default():
    with pytest.raises(ValidationFailed) as caught:
        validate_rules([{"label": "only", "when": {"risk_flag": True}, "action": "VOID"}])

    assert caught.value.details == {
        "rules": {"0": {"when": ["the last rule is the default: no conditions"]}}}


def test_an_early_rule_without_conditions_would_hide_the_rest():
    found = problems({"label": "everything", "when": {}, "action": "RETURN"})

    assert list(found) == ["0"]
    assert found["0"]["when"][0].startswith("only the last rule may have no conditions")


@pytest.mark.parametrize(("rules", "message"), [
    ([], "must be a non-empty list of rules, the last one the default"),
    ({"label": "x"}, "must be a non-empty list of rules, the last one the default"),
    ("RETURN", "must be a non-empty list of rules, the last one the default"),
    ([DEFAULT] * 101, "at most 100 rules"),
])
def test_rules_must_be_a_bounded_list(rules, message):
    with pytest.raises(ValidationFailed) as caught:
        validate_rules(rules)

    assert caught.value.details == {"rules": [message]}


def test_a_rule_that_is_not_an_object_is_named_by_position():
    assert problems("RETURN") == {"0": {"non_field_errors": ["must be an object"]}}


def test_problems_of_several_rules_are_reported_together():
    found = problems(
        {"label": "a", "when": {"risk_flag": True}, "action": "RETURN"},
        {"label": "b", "when": {"refunded_share_min": 3}, "action": "RETURN"},
        {"label": "c", "when": {"risk_flag": False}, "action": "EXPLODE"},
    )

    assert sorted(found) == ["1", "2"]
    assert found["1"] == {"when": {"refunded_share_min": ["must be between 0 and 1"]}}


def test_valid_rules_are_stored_with_every_key_and_decimal_strings():
    rules = clean_rules([
        {"label": " most ", "when": {"refunded_share_min": 0.5, "template_kind":
                                     ["PERCENT_OFF", "EXCHANGE", "EXCHANGE"]},
         "action": "RETURN"},
        DEFAULT,
    ])

    assert rules[0] == {"label": "most", "action": "RETURN", "requires_approval": False,
                        "compensation": {},
                        "when": {"refunded_share_min": "0.5",
                                 "template_kind": ["EXCHANGE", "PERCENT_OFF"]}}


def test_every_condition_has_help_for_the_docs():
    assert all(condition.help for condition in CONDITIONS.values())
