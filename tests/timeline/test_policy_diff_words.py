"""The diff's words for what changed inside a rule (console.policy_words). No database."""

from timeline.policy_words import rules_diff, rules_in_words

OLD = [{"label": "Recent full refunds return", "action": "RETURN",
        "when": {"refund_type": "FULL", "days_since_redemption_max": 30}},
       {"label": "Otherwise", "when": {}, "action": "KEEP_USED"}]


def diff(new):
    return rules_diff(rules_in_words(OLD, {}), rules_in_words(new, {}))


def test_an_edited_value_reads_old_to_new_inside_the_rule():
    new = [{**OLD[0], "when": {"refund_type": "FULL", "days_since_redemption_max": 2}}, OLD[1]]

    rows = diff(new)

    assert [row.change for row in rows] == ["changed", "same"]
    assert rows[0].changes == ["days since redemption at most: 30 days → 2 days"]


def test_a_relabelled_rule_edited_in_place_is_changed_not_removed_and_added():
    new = [{**OLD[0], "label": "Full refunds within a week return",
            "when": {"refund_type": "FULL", "days_since_redemption_max": 7, "risk_flag": False},
            "requires_approval": True}, OLD[1]]

    [row, _] = diff(new)

    assert row.change == "changed"
    assert row.changes == [
        "label: “Recent full refunds return” → “Full refunds within a week return”",
        "days since redemption at most: 30 days → 7 days",
        "condition added: the refund is not risk-flagged",
        "an operator now approves first",
    ]


def test_swapped_rules_are_moves_not_edits():
    other = {"label": "Risky", "when": {"risk_flag": True}, "action": "MANUAL_REVIEW"}
    old = [OLD[0], other, OLD[1]]
    new = [other, OLD[0], OLD[1]]

    rows = rules_diff(rules_in_words(old, {}), rules_in_words(new, {}))

    assert "changed" not in [row.change for row in rows]
    assert "moved" in [row.change for row in rows]
