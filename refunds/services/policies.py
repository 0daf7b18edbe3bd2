"""Writing return policies: a draft copied from the latest version, edited, then published.

A published version is never changed again (decisions name the version they used); editing a
policy means a new draft based on its latest version. These are the only writers of policy
rows. Each runs in one transaction that may be nested (the admin's change view holds one).
"""

from django.db import IntegrityError, transaction
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from coupons import clock
from coupons.errors import (
    NotFound,
    PolicyDraftExists,
    PolicyDraftUnchanged,
    PolicyVersionFrozen,
    ValidationFailed,
)
from refunds.models import ReturnPolicy, ReturnPolicyVersion
from refunds.policy_engine import clean_rules
from refunds.reply_words import clean_replies

Status = ReturnPolicyVersion.Status


def _policy_id(policy) -> int:
    return policy.pk if isinstance(policy, ReturnPolicy) else policy


def _locked_version(version) -> ReturnPolicyVersion:
    # The row lock serialises a PATCH racing a publish of the same draft.
    pk = version.pk if isinstance(version, ReturnPolicyVersion) else version
    locked = (ReturnPolicyVersion.objects.select_for_update(no_key=True)
              .select_related("policy").filter(pk=pk).first())
    if locked is None:
        raise NotFound(_("No such policy version."), version_id=pk)
    return locked


def policy_create(*, code: str, name: str, actor: str, rules: list | None = None) -> ReturnPolicy:
    """A new policy with its first draft: the given rules, or a copy of the default policy's."""
    if rules is None:
        based_on = (ReturnPolicyVersion.objects
                    .filter(policy__code=ReturnPolicy.DEFAULT_CODE, status=Status.PUBLISHED)
                    .order_by("-number").first())
        rules = based_on.rules if based_on is not None else []
    else:
        based_on = None
    rules = clean_rules(rules)
    try:
        with transaction.atomic():
            now = clock.now()
            policy = ReturnPolicy.objects.create(code=code, name=name, created_at=now)
            ReturnPolicyVersion.objects.create(
                policy=policy, number=1, status=Status.DRAFT, rules=rules, based_on=based_on,
                created_by=actor, created_at=now,
            )
    except IntegrityError:
        raise ValidationFailed(_("A return policy with this code exists."),
                               code=[gettext("already taken")]) from None
    return policy


def policy_draft_create(policy, actor: str, *, rules: list | None = None) -> ReturnPolicyVersion:
    """The next version as a draft, copying the latest version's rules (one draft at a time);
    `rules` replaces the copy at once."""
    cleaned = None if rules is None else clean_rules(rules)
    with transaction.atomic():
        # Locking the policy row makes two concurrent "new draft" requests queue.
        locked = (ReturnPolicy.objects.select_for_update(no_key=True)
                  .filter(pk=_policy_id(policy)).first())
        if locked is None:
            raise NotFound(_("No such return policy."), policy_id=_policy_id(policy))
        latest = locked.versions.order_by("-number").first()
        if latest is not None and latest.status == Status.DRAFT:
            raise PolicyDraftExists(version=latest, draft_number=latest.number)
        return ReturnPolicyVersion.objects.create(
            policy=locked, number=(latest.number + 1) if latest else 1, status=Status.DRAFT,
            rules=cleaned if cleaned is not None else (latest.rules if latest else []),
            replies=latest.replies if latest else {},
            based_on=latest,
            created_by=actor, created_at=clock.now(),
        )


def policy_draft_update(version, rules: list, actor: str, *,
                        replies: dict | None = None) -> ReturnPolicyVersion:
    """Replace a draft's rules (and, given, the customer replies' greeting and closing); a
    published version refuses with 409 INVALID_STATE."""
    cleaned_replies = None if replies is None else clean_replies(replies)
    with transaction.atomic():
        locked = _locked_version(version)
        if locked.status != Status.DRAFT:
            raise PolicyVersionFrozen(version=locked)
        locked.rules = clean_rules(rules)
        if cleaned_replies is not None:
            locked.replies = cleaned_replies
        # The status in the WHERE is the compare-and-set: a publish that won cannot be edited.
        updated = ReturnPolicyVersion.objects.filter(pk=locked.pk, status=Status.DRAFT).update(
            rules=locked.rules, replies=locked.replies
        )
        if updated != 1:
            raise PolicyVersionFrozen(version=_locked_version(locked))
        return locked


def policy_publish(version, actor: str) -> ReturnPolicyVersion:
    """Freeze a draft: from now on refunds of its policy's coupons use it."""
    with transaction.atomic():
        locked = _locked_version(version)
        if locked.status != Status.DRAFT:
            raise PolicyVersionFrozen(version=locked)
        # Validated again: the rules must still name existing templates.
        clean_rules(locked.rules)
        in_force = (ReturnPolicyVersion.objects
                    .filter(policy_id=locked.policy_id, status=Status.PUBLISHED)
                    .order_by("-number").first())
        if in_force is not None and (in_force.rules, in_force.replies) == (
                locked.rules, locked.replies):
            raise PolicyDraftUnchanged(version=locked, same_as=in_force.number)
        now = clock.now()
        updated = ReturnPolicyVersion.objects.filter(pk=locked.pk, status=Status.DRAFT).update(
            status=Status.PUBLISHED, published_by=actor, published_at=now
        )
        if updated != 1:
            raise PolicyVersionFrozen(version=_locked_version(locked))
        locked.status, locked.published_by, locked.published_at = Status.PUBLISHED, actor, now
        return locked


def return_policy_named(value) -> ReturnPolicy:
    """The policy a coupon template names: a policy, its id or its code.

    Only a policy with a published version can be named, so a coupon issued under it has rules.
    """
    if isinstance(value, ReturnPolicy):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        policy = ReturnPolicy.objects.filter(pk=value).first()
    else:
        text = str(value)
        policy = ReturnPolicy.objects.filter(code=text).first()
        if policy is None and text.isdigit() and len(text) < 19:
            policy = ReturnPolicy.objects.filter(pk=int(text)).first()
    if policy is None:
        # As for a template_id in a body: a name that refers to nothing is a 404 naming it.
        raise NotFound(_("No such return policy."), return_policy=value)
    if not ReturnPolicyVersion.objects.filter(policy=policy, status=Status.PUBLISHED).exists():
        raise ValidationFailed(_("The template terms are not valid."),
                               return_policy=[gettext("This policy has no published version "
                                                      "yet.")])
    return policy
