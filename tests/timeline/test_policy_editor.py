"""The return-policy editor: drafts from the latest version, rules edited, moved and removed
through the service, engine errors beside their inputs, impact counts, publish, diff, roles."""

import re
from datetime import UTC, datetime, time, timedelta

import pytest
from django.test import Client
from django.urls import reverse

from coupons.models import CommandRejection
from refunds.impact import policy_impact
from refunds.models import RefundCoupon, ReturnPolicy, ReturnPolicyVersion
from refunds.services.policies import policy_draft_create, policy_draft_update, policy_publish
from tests.conftest import START
from tests.refunds.conftest import issue, redeem
from tests.refunds.test_impact_replay import stored_history

pytestmark = pytest.mark.django_db

FLAGS = ("coupon_expired", "template_returnable", "campaign_closed", "risk_flag")


@pytest.fixture
def default():
    return ReturnPolicy.objects.get(code="default")


@pytest.fixture
def admin(signed_in):
    return signed_in("policy_admin", "pat")


@pytest.fixture
def draft(default, clock):
    return policy_draft_create(default, "user:pat")


def within_seven_days(rules: list[dict]) -> list[dict]:
    """The shipped rules with the full-refund window cut to 7 days, its label saying so."""
    rules = [dict(rule) for rule in rules]
    rules[4] = {**rules[4], "label": "Full refund within 7 days returns the coupon",
                "when": {"refund_type": "FULL", "days_since_redemption_max": 7}}
    return rules


def relabelled(draft) -> ReturnPolicyVersion:
    """The draft with one change, so publishing it makes a version that differs."""
    rules = [dict(rule) for rule in draft.rules]
    rules[-1] = {**rules[-1], "label": f"Otherwise the coupon stays used ({draft.number})"}
    return policy_draft_update(draft, rules, "user:pat")


def edit_url(version):
    return reverse("console:policy_version_edit",
                   kwargs={"policy_id": version.policy_id, "number": version.number})


def version_url(version, name="console:policy_version"):
    return reverse(name, kwargs={"policy_id": version.policy_id, "number": version.number})


def editor_post(rules, **extra) -> dict:
    """The editor's form as a browser sends it, one rule per form, ORDER = position."""
    data = {"form-TOTAL_FORMS": str(len(rules)), "form-INITIAL_FORMS": str(len(rules)),
            "form-MIN_NUM_FORMS": "0", "form-MAX_NUM_FORMS": "1000"}
    for n, rule in enumerate(rules):
        prefix = f"form-{n}-"
        labels = rule.get("labels") or {"en": rule["label"], "zh-hans": rule["label"]}
        data[prefix + "label"] = labels["en"]
        data[prefix + "label_zh"] = labels["zh-hans"]
        data[prefix + "action"] = rule["action"]
        data[prefix + "ORDER"] = str(n + 1)
        if rule.get("requires_approval"):
            data[prefix + "requires_approval"] = "on"
        for name, value in rule.get("when", {}).items():
            if name in FLAGS:
                value = "yes" if value else "no"
            data[prefix + name] = value if isinstance(value, list) else str(value)
        for key, value in (rule.get("compensation") or {}).items():
            data[prefix + ("compensation_template" if key == "template_id"
                           else "compensation_amount")] = str(value)
    data.update(extra)
    return data


def rule_labels_shown(html: str) -> list[str]:
    return re.findall(r'name="form-\d+-label"(?: value="([^"]*)")?', html)


def errors_beside(html: str, field_id: str) -> str:
    found = re.search(rf'id="{field_id}-errors">(.*?)</ul>', html, re.S)
    return found.group(1) if found else ""


def test_policies_list_and_versions_say_who_published_when(admin, draft):
    listing = admin.get(reverse("console:policies")).content.decode()
    assert "default" in listing and "Default return policy" in listing
    assert "New policy" in listing
    assert 'href="/policies/' in listing

    page = admin.get(reverse("console:policy", kwargs={"policy_id": draft.policy_id}))
    html = page.content.decode()
    assert "v1" in html and "v2" in html
    assert "PUBLISHED" in html and "DRAFT" in html
    assert "migration, <time" in html  # v1 published by the migration, with its time
    assert f'href="{edit_url(draft)}"' in html
    assert "New draft from" not in html  # one draft at a time: this one is open


def test_new_draft_copies_the_latest_version_once(admin, default, clock):
    url = reverse("console:policy_draft_new", kwargs={"policy_id": default.pk})

    answer = admin.post(url)

    draft = ReturnPolicyVersion.objects.get(policy=default, number=2)
    assert answer.status_code == 302 and answer["Location"] == edit_url(draft)
    v1 = ReturnPolicyVersion.objects.get(policy=default, number=1)
    assert (draft.status, draft.based_on_id, draft.rules) == ("DRAFT", v1.pk, v1.rules)
    assert draft.created_by == "user:pat"
    editor = admin.get(answer["Location"]).content.decode()
    assert rule_labels_shown(editor) == [rule["label"] for rule in v1.rules]

    again = admin.post(url)
    assert again.status_code == 409
    assert "already has a draft" in again.content.decode()
    assert ReturnPolicyVersion.objects.filter(policy=default).count() == 2


def test_edited_rules_are_saved_through_the_service(admin, draft):
    rules = [dict(rule) for rule in draft.rules]
    rules[4] = {**rules[4], "label": "Full refund within 7 days returns the coupon",
                "when": {"refund_type": "FULL", "days_since_redemption_max": 7}}

    answer = admin.post(edit_url(draft), editor_post(rules))

    assert answer.status_code == 302 and answer["Location"] == version_url(draft)
    draft.refresh_from_db()
    assert draft.rules[4]["when"] == {"refund_type": "FULL", "days_since_redemption_max": 7}
    page = admin.get(answer["Location"]).content.decode()
    assert "Saved draft v2: 6 rules." in page
    assert "Full refund within 7 days returns the coupon" in page
    assert "the refund is full, and redeemed at most 7 days ago" in page


def test_rows_are_saved_in_the_order_their_positions_say(admin, draft):
    rules = draft.rules
    data = editor_post(rules, **{"form-0-ORDER": "2", "form-1-ORDER": "1"})

    assert admin.post(edit_url(draft), data).status_code == 302

    draft.refresh_from_db()
    assert [rule["label"] for rule in draft.rules] == [
        rules[1]["label"], rules[0]["label"], *(rule["label"] for rule in rules[2:])]


def test_each_row_has_one_control_per_change(admin, draft):
    html = admin.get(edit_url(draft)).content.decode()

    # Moving and removing are buttons; no position input or removal tick box beside them.
    assert 'type="hidden" name="form-0-ORDER" value="1"' in html
    assert 'name="form-0-DELETE"' not in html
    assert "Remove on save" not in html and ">Position<" not in html
    assert html.count('value="remove-0"') == html.count('value="down-0"') == 1


def test_move_add_and_remove_buttons_rearrange_the_page_and_save_nothing(admin, draft):
    rules = draft.rules
    labels = [rule["label"] for rule in rules]

    moved = admin.post(edit_url(draft), editor_post(rules, op="up-1"))
    assert moved.status_code == 200
    assert rule_labels_shown(moved.content.decode()) == [labels[1], labels[0], *labels[2:]]

    added = admin.post(edit_url(draft), editor_post(rules, op="add"))
    # The new rule goes before the default, which stays last.
    assert rule_labels_shown(added.content.decode()) == [*labels[:-1], "", labels[-1]]

    removed = admin.post(edit_url(draft), editor_post(rules, op="remove-2"))
    assert rule_labels_shown(removed.content.decode()) == labels[:2] + labels[3:]

    draft.refresh_from_db()
    assert draft.rules == rules


def test_engine_errors_show_beside_their_inputs_and_nothing_is_saved(admin, draft):
    rules = [dict(rule) for rule in draft.rules]
    rules[2] = {**rules[2], "when": {"refund_type": "PARTIAL", "refunded_share_min": "1.5"}}
    rules[3] = {**rules[3], "action": "COMPENSATE"}  # but says neither template nor amount
    rules[4] = {**rules[4], "when": {"days_since_redemption_max": "soon"}}
    rules[5] = {**rules[5], "when": {"risk_flag": True}}  # the default may have no condition

    answer = admin.post(edit_url(draft), editor_post(rules))

    assert answer.status_code == 400
    html = answer.content.decode()
    assert "must be between 0 and 1" in errors_beside(html, "id_form-2-refunded_share_min")
    assert "give exactly one of" in errors_beside(html, "id_form-3-compensation_template")
    assert "whole number of days" in errors_beside(html, "id_form-4-days_since_redemption_max")
    assert "Conditions: the last rule is the default: no conditions" in html
    # What was typed stays in the inputs to be corrected.
    assert 'name="form-2-refunded_share_min" value="1.5"' in html
    draft.refresh_from_db()
    assert draft.rules == ReturnPolicyVersion.objects.get(pk=draft.based_on_id).rules


def test_a_credit_amount_error_sits_beside_the_amount(admin, draft):
    rules = [dict(rule) for rule in draft.rules]
    rules[3] = {**rules[3], "action": "COMPENSATE", "compensation": {"amount": "5.001"}}

    html = admin.post(edit_url(draft), editor_post(rules)).content.decode()

    assert "two decimal places" in errors_beside(html, "id_form-3-compensation_amount")


def test_removing_every_rule_is_refused_with_the_engine_words(admin, draft):
    removed = admin.post(edit_url(draft), editor_post(draft.rules[:1], op="remove-0"))
    assert rule_labels_shown(removed.content.decode()) == []
    data = editor_post([])  # what the emptied page sends on Save

    answer = admin.post(edit_url(draft), data)

    assert answer.status_code == 400
    assert "Rules: must be a non-empty list of rules" in answer.content.decode()
    draft.refresh_from_db()
    assert len(draft.rules) == 6


@pytest.fixture
def history(template, ctx):
    coupons = [issue(template, ctx, user_id=f"u{n}") for n in range(2)]
    for n, coupon in enumerate(coupons):
        redeem(coupon, ctx, order_id=f"order-real-{n}")
    stored_history(coupons, 300)


def test_impact_of_the_draft_is_shown_as_counts_and_examples(admin, draft, history):
    draft = policy_draft_update(draft, within_seven_days(draft.rules), "user:pat")
    expected = policy_impact(draft)
    assert expected["changed"] > 0  # the history has full refunds 8..30 days after redemption

    html = admin.get(version_url(draft, "console:policy_version_impact")).content.decode()

    assert f'id="impact-decisions">{expected["decisions"]}<' in html
    assert f'id="impact-changed">{expected["changed"]}<' in html
    change = expected["changes"][0]
    assert change["from"] == "RETURN" and change["to"] == "KEEP_USED"
    assert f"<td>{change['count']}</td>" in html
    for refund_id in change["example_refund_ids"]:
        coupon_id = RefundCoupon.objects.get(refund_id=refund_id).coupon_id
        assert f'<a href="/coupons/{coupon_id}/">{refund_id}</a>' in html
    assert "Publish v2" in html


def test_impact_replays_only_the_days_asked_for(admin, draft, history):
    draft = policy_draft_update(draft, within_seven_days(draft.rules), "user:pat")
    url = version_url(draft, "console:policy_version_impact")
    since, until = START.date() + timedelta(days=10), START.date() + timedelta(days=39)
    # Days are whole UTC days: from the first one's midnight to the midnight after the last.
    first_midnight = datetime.combine(since, time(), UTC)
    expected = policy_impact(draft, date_from=first_midnight,
                             date_to=first_midnight + timedelta(days=30))
    assert 0 < expected["decisions"] < policy_impact(draft)["decisions"]

    html = admin.get(url, {"since": since.isoformat(), "until": until.isoformat()}).content
    backwards = admin.get(url, {"since": until.isoformat(), "until": since.isoformat()})

    assert f'id="impact-decisions">{expected["decisions"]}<'.encode() in html
    assert f'id="impact-changed">{expected["changed"]}<'.encode() in html
    assert "must not be before the first day" in errors_beside(
        backwards.content.decode(), "id_until")
    assert b'id="impact-decisions"' not in backwards.content
    # The last day there is: everything from `since` on, not an overflow.
    to_the_end = admin.get(url, {"since": since.isoformat(), "until": "9999-12-31"}).content
    from_since = policy_impact(draft, date_from=first_midnight)["decisions"]
    assert f'id="impact-decisions">{from_since}<'.encode() in to_the_end


def test_publish_asks_for_confirmation_then_freezes_the_version(admin, draft):
    draft = relabelled(draft)
    publish = version_url(draft, "console:policy_version_publish")

    unconfirmed = admin.post(publish, {})
    assert unconfirmed.status_code == 400
    assert "Tick this box to publish." in errors_beside(unconfirmed.content.decode(), "id_confirm")
    draft.refresh_from_db()
    assert draft.status == "DRAFT"

    answer = admin.post(publish, {"confirm": "on"})

    assert answer.status_code == 302 and answer["Location"] == version_url(draft)
    draft.refresh_from_db()
    assert (draft.status, draft.published_by) == ("PUBLISHED", "user:pat")
    page = admin.get(answer["Location"]).content.decode()
    assert "Published v2: refunds from now on use it." in page
    assert "Edit rules" not in page and "read only" in page


def test_a_published_version_refuses_edits_and_stays_as_it_was(admin, draft):
    draft = relabelled(draft)
    rules = draft.rules
    policy_publish(draft, "user:pat")
    changed = [dict(rule) for rule in rules]
    changed[0]["label"] = "Rewritten after publishing"

    posted = admin.post(edit_url(draft), editor_post(changed))
    opened = admin.get(edit_url(draft))
    published_again = admin.post(version_url(draft, "console:policy_version_publish"),
                                 {"confirm": "on"})

    for answer in (posted, opened, published_again):
        assert answer.status_code == 409
        assert "A published policy version never changes" in answer.content.decode()
    assert 'name="form-0-label"' not in opened.content.decode()
    draft.refresh_from_db()
    assert draft.rules == rules and draft.status == "PUBLISHED"


def test_diff_shows_rules_changed_added_removed_and_moved(admin, draft):
    rules = [dict(rule) for rule in draft.rules]
    # Edited in place under the same label (a label that says 30 days keeps its 30 days).
    rules[4] = {**rules[4], "when": {**rules[4]["when"], "face_value_max": "50.00"}}
    rules.insert(5, {"label": "Closed campaigns get a credit", "when": {"campaign_closed": True},
                     "action": "COMPENSATE", "compensation": {"amount": "5.00"}})
    del rules[1]
    policy_draft_update(draft, rules, "user:pat")

    answer = admin.get(reverse("console:policy_diff", kwargs={"policy_id": draft.policy_id}),
                       {"from": 1, "to": 2})

    html = answer.content.decode()
    rows = dict(re.findall(r'<tr class="diff-(\w+)">\s*<td>(.*?)</td>', html, re.S))
    assert "The template says its coupons are not returned" in rows["removed"]
    assert "redeemed at most 30 days ago" in rows["changed"]
    assert "face value at most ¥50.00" in html
    assert "give a credit of ¥5.00" in html
    assert html.count('class="diff-added"') == 1 and html.count('class="diff-same"') == 4


def test_support_reads_policies_but_sees_no_editor_and_cannot_use_it(signed_in, default,
                                                                     draft):
    support = signed_in("support", "sam")

    listing = support.get(reverse("console:policies"))
    page = support.get(reverse("console:policy", kwargs={"policy_id": default.pk}))
    version = support.get(version_url(draft)).content.decode()
    assert listing.status_code == page.status_code == 200
    assert 'href="/policies/"' not in listing.content.decode()  # no navigation entry
    assert "New policy" not in listing.content.decode()
    assert "Edit rules" not in version and "Preview impact" not in version

    for answer in (
        # The impact replay is work for the server: policy admins only.
        support.get(version_url(draft, "console:policy_version_impact")),
        support.post(reverse("console:policy_draft_new", kwargs={"policy_id": default.pk})),
        support.get(edit_url(draft)),
        support.post(reverse("console:policy_new"), {"code": "mine", "name": "Mine"}),
        support.post(edit_url(draft), editor_post([{"label": "x", "action": "VOID"}])),
        support.post(version_url(draft, "console:policy_version_publish"), {"confirm": "on"}),
    ):
        assert answer.status_code == 403
    draft.refresh_from_db()
    assert draft.status == "DRAFT" and len(draft.rules) == 6
    assert not ReturnPolicy.objects.filter(code="mine").exists()
    assert CommandRejection.objects.filter(op_type="CONSOLE", actor__contains="sam").count() == 6


def test_only_policy_admins_see_the_policies_entry(signed_in):
    for role, shown in (("policy_admin", True), ("operator", False), ("support", False)):
        home = signed_in(role, f"{role}-nav").get("/").content.decode()
        assert ('<a href="/policies/"' in home) is shown, role


def test_an_htmx_save_answers_a_redirect_header(admin, draft):
    answer = admin.post(edit_url(draft), editor_post(draft.rules), HTTP_HX_REQUEST="true")

    assert answer.status_code == 204 and answer["HX-Redirect"] == version_url(draft)


def test_an_htmx_edit_of_a_published_version_replaces_the_page_with_the_refusal(admin, draft):
    draft = relabelled(draft)
    policy_publish(draft, "user:pat")

    answer = admin.post(edit_url(draft), editor_post(draft.rules), HTTP_HX_REQUEST="true")

    assert answer.status_code == 409
    assert (answer["HX-Retarget"], answer["HX-Reselect"]) == ("main", "main")
    assert "A published policy version never changes" in answer.content.decode()


def test_policy_pages_make_a_fixed_number_of_queries_however_many_versions(
        admin, default, clock, django_assert_max_num_queries):
    for _ in range(15):
        policy_publish(relabelled(policy_draft_create(default, "user:pat")), "user:pat")
    draft = policy_draft_create(default, "user:pat")
    pages = [reverse("console:policies"),
             reverse("console:policy", kwargs={"policy_id": default.pk}),
             version_url(draft), edit_url(draft),
             reverse("console:policy_diff", kwargs={"policy_id": default.pk})]
    for url in pages:
        # Session, user, groups and permissions are 4 or 5 of these; the page itself 2 or 3,
        # and a version's page 2 more: the version in force and the templates it decides for.
        with django_assert_max_num_queries(9):
            assert admin.get(url).status_code == 200


def test_editor_posts_without_the_csrf_token_are_refused(make_person, draft):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(make_person("policy_admin", "pat"))
    rules = [dict(rule) for rule in draft.rules]
    rules[0]["label"] = "Forged"

    for url, data in ((edit_url(draft), editor_post(rules)),
                      (version_url(draft, "console:policy_version_publish"), {"confirm": "on"})):
        assert browser.post(url, data).status_code == 403
    draft.refresh_from_db()
    assert draft.status == "DRAFT" and draft.rules[0]["label"] != "Forged"


def test_a_new_policy_starts_as_a_draft_of_the_default_rules(admin, default, clock):
    answer = admin.post(reverse("console:policy_new"),
                        {"code": "seven-days", "name": "Seven days"})

    policy = ReturnPolicy.objects.get(code="seven-days")
    assert answer.status_code == 302
    assert answer["Location"] == reverse("console:policy_version_edit",
                                         kwargs={"policy_id": policy.pk, "number": 1})
    first = policy.versions.get()
    assert first.status == "DRAFT" and first.created_by == "user:pat"
    assert first.rules == default.versions.get(number=1).rules


def test_a_policy_code_taken_or_not_a_slug_is_refused_beside_the_code(admin, clock):
    url = reverse("console:policy_new")
    for code, message in (("default", "already taken"), ("seven days", "Enter a valid")):
        answer = admin.post(url, {"code": code, "name": "Seven days"})
        assert answer.status_code == 400
        assert message in errors_beside(answer.content.decode(), "id_code")
    assert ReturnPolicy.objects.count() == 1


def test_digits_that_are_not_decimal_are_bad_input_not_a_crash(admin, draft):
    rules = [dict(rule) for rule in draft.rules]
    rules[4] = {**rules[4], "when": {"days_since_redemption_max": "²"}}

    saved = admin.post(edit_url(draft), editor_post(rules))
    moved = admin.post(edit_url(draft), editor_post(draft.rules, op="up-²"))
    diff = admin.get(reverse("console:policy_diff", kwargs={"policy_id": draft.policy_id}),
                     {"from": "²"})

    assert saved.status_code == 400
    assert "whole number of days" in errors_beside(saved.content.decode(),
                                                   "id_form-4-days_since_redemption_max")
    assert moved.status_code == diff.status_code == 200


def test_each_rule_is_labelled_in_both_languages_and_read_in_the_readers(admin, draft):
    rules = [dict(rule) for rule in draft.rules]
    rules[0] = {**rules[0], "labels": {"en": "Exchange coupons stay used",
                                       "zh-hans": "兑换券用后不退"}}

    answer = admin.post(edit_url(draft), editor_post(rules))

    assert answer.status_code == 302
    draft.refresh_from_db()
    assert (draft.rules[0]["label"], draft.rules[0]["labels"]) == (
        "Exchange coupons stay used", {"en": "Exchange coupons stay used",
                                       "zh-hans": "兑换券用后不退"})
    english = admin.get(version_url(draft)).content.decode()
    chinese = admin.get(version_url(draft), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "1. Exchange coupons stay used</strong>" in english
    assert "1. 兑换券用后不退</strong>" in chinese and "Exchange coupons stay" not in chinese


def test_a_rule_with_a_single_label_shows_it_in_both_inputs_as_stored(admin, default, clock):
    rules = [{"label": "My own rule", "when": {"risk_flag": True}, "action": "VOID"},
             {"label": "Otherwise kept", "when": {}, "action": "KEEP_USED"}]
    draft = policy_draft_create(default, "user:pat", rules=rules)

    editor = admin.get(edit_url(draft)).content.decode()
    chinese = admin.get(version_url(draft), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

    assert 'name="form-0-label" value="My own rule"' in editor
    assert 'name="form-0-label_zh" value="My own rule"' in editor
    assert "1. My own rule</strong>" in chinese


def test_a_label_whose_days_contradict_its_limit_is_refused_beside_it(admin, draft):
    rules = [dict(rule) for rule in draft.rules]
    # The limit became 0 days; both labels still promise 30.
    labels = {"en": rules[4]["label"], "zh-hans": "核销后 30 天内全额退款"}
    rules[4] = {**rules[4], "labels": labels,
                "when": {"refund_type": "FULL", "days_since_redemption_max": 0}}

    answer = admin.post(edit_url(draft), editor_post(rules))

    assert answer.status_code == 400
    html = answer.content.decode()
    for field in ("id_form-4-label", "id_form-4-label_zh"):
        assert ("the label says 30 days, but the rule&#x27;s days-since-redemption limit is 0"
                in errors_beside(html, field))
    draft.refresh_from_db()
    assert draft.rules[4]["when"]["days_since_redemption_max"] == 30


def test_the_editor_links_to_the_impact_preview(admin, draft):
    editor = admin.get(edit_url(draft)).content.decode()

    assert f'href="{version_url(draft, "console:policy_version_impact")}"' in editor


def test_an_unchanged_draft_is_not_published_and_says_why(admin, draft):
    answer = admin.post(version_url(draft, "console:policy_version_publish"), {"confirm": "on"})

    assert answer.status_code == 409
    assert "same as the published version" in answer.content.decode()
    draft.refresh_from_db()
    assert draft.status == "DRAFT"
    assert ReturnPolicyVersion.objects.filter(policy=draft.policy, status="PUBLISHED").count() == 1


def replies_post(rules, **words) -> dict:
    """The editor's form with the replies' greeting and closing: the catalogue's, or `words`."""
    replies = {"replies-greeting_en": "Hello!", "replies-greeting_zh": "您好！",
               "replies-closing_en": "If you have any other questions, we are glad to help.",
               "replies-closing_zh": "如有其他问题，欢迎随时联系我们。"}
    replies.update({f"replies-{name}": text for name, text in words.items()})
    return editor_post(rules, **replies)


def test_the_default_policys_editor_shows_the_replies_words_from_the_catalogue(admin, draft):
    editor = admin.get(edit_url(draft)).content.decode()

    assert 'name="replies-greeting_en" value="Hello!"' in editor
    assert 'name="replies-closing_en" value="If you have any other questions, we are glad' \
        in editor


def test_a_policy_admins_greeting_is_used_once_published_and_not_before(
        admin, draft, signed_in, template):
    from tests.timeline.test_customer_replies import replies
    from tests.timeline.test_reply_words import page_of, partly_refunded

    coupon = partly_refunded(template)
    posted = admin.post(edit_url(draft), replies_post(draft.rules, greeting_en="Hi there!",
                                                      greeting_zh="亲，您好！"))
    assert posted.status_code == 302
    draft.refresh_from_db()
    assert draft.replies["greeting"] == {"en": "Hi there!", "zh-hans": "亲，您好！"}
    support = signed_in("support")
    assert replies(page_of(support, coupon), "refund")["en"].startswith("Hello!")

    policy_publish(draft, "user:pat")

    said = replies(page_of(support, coupon), "refund")
    assert said["en"].startswith("Hi there! ") and said["zh-hans"].startswith("亲，您好！")
    assert said["en"].endswith("we are glad to help.")


def test_an_empty_greeting_is_refused_beside_its_input_and_nothing_is_saved(admin, draft):
    answer = admin.post(edit_url(draft), replies_post(draft.rules, closing_zh="  "))

    assert answer.status_code == 400
    assert "required, 1 to 300 characters" in errors_beside(answer.content.decode(),
                                                            "id_replies-closing_zh")
    draft.refresh_from_db()
    assert draft.replies == {}


def test_support_cannot_change_the_replies_words(signed_in, draft):
    support = signed_in("support", "sam")

    answer = support.post(edit_url(draft), replies_post(draft.rules, greeting_en="Yo"))

    assert answer.status_code == 403
    draft.refresh_from_db()
    assert draft.replies == {}
