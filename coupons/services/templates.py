from django.db import IntegrityError, transaction
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from coupons import after_sale, clock
from coupons.errors import AlreadyExists, NotFound, TermsConflict, ValidationFailed
from coupons.models import CouponKind, CouponTemplate, CouponTemplateVersion

# Each rule of the terms: the field it names when broken and the fields it reads.
RULE_READS = {
    "face_value": {"kind", "face_value"},
    "percent_off": {"kind", "percent_off"},
    "valid_until": {"valid_until", "valid_days"},
    "valid_from": {"valid_from", "valid_until"},
}


def term_problems(terms: dict) -> dict[str, list[str]]:
    """What keeps terms from pricing an order, by the field each broken rule names."""
    # The problems travel in the answer's details, stored as JSON: worded now, not lazily; a
    # list per field, as every other 400 names its fields.
    problems = {}
    kind = terms.get("kind")
    if kind in (CouponKind.AMOUNT_OFF, CouponKind.EXCHANGE) and not terms.get("face_value"):
        problems["face_value"] = [gettext("Required and above zero for this kind.")]
    if kind == CouponKind.PERCENT_OFF:
        percent = terms.get("percent_off")
        if percent is None or not 0 < percent <= 100:
            problems["percent_off"] = [gettext("Required, above 0 and at most 100.")]
    has_window = terms.get("valid_until") is not None
    if has_window == (terms.get("valid_days") is not None):
        problems["valid_until"] = [gettext("Give either valid_until (a window) or valid_days.")]
    if has_window and terms.get("valid_from") and terms["valid_from"] >= terms["valid_until"]:
        problems["valid_from"] = [gettext("Must be before valid_until.")]
    return problems


def validate_terms(terms: dict) -> None:
    """Refuse terms that could not price an order; raises with every problem at once."""
    if problems := term_problems(terms):
        raise ValidationFailed(_("The template terms are not valid."), **problems)


def validate_edit(stored: CouponTemplate, edit: dict) -> dict:
    """The terms after `edit`, or why not: a rule broken by the fields sent alone is the
    request's fault (400); one the stored terms take part in is a conflict with them (409)."""
    merged = {**stored.terms(), **edit}
    problems = term_problems(merged)
    if problems and all(RULE_READS[field] <= edit.keys() for field in problems):
        raise ValidationFailed(_("The template terms are not valid."), **problems)
    if problems:
        raise TermsConflict(current_version=stored.version, **problems)
    return merged


def resolve_return_policy(terms: dict) -> dict:
    """`return_policy` may be given as a policy, its id or its code; None is the default policy."""
    value = terms.get("return_policy")
    if value is None:
        return terms
    return {**terms, "return_policy": after_sale.return_policy_named(value)}


def normalise_scope(terms: dict) -> dict:
    """A scope's stores as a set (sorted, once each), so an edit that only reorders them is no
    new version and the filters compare like with like."""
    if "stores" not in terms:
        return terms
    return {**terms, "stores": sorted(set(terms["stores"]))}


def _freeze(template: CouponTemplate, now) -> CouponTemplateVersion:
    return CouponTemplateVersion.objects.create(
        template=template, version=template.version, created_at=now, **template.terms()
    )


def _code_taken(code: str) -> AlreadyExists:
    existing = CouponTemplate.objects.get(code=code)
    return AlreadyExists(_("A template with this code exists."), code=code,
                         template_id=existing.pk, current_version=existing.version)


# Not durable: the admin's add and change views already hold a transaction around save_model.
def template_create(*, code: str, **terms) -> CouponTemplate:
    terms = normalise_scope(resolve_return_policy(terms))
    validate_terms(terms)
    with transaction.atomic():
        now = clock.now()
        try:
            # The unique index decides between concurrent creates of one code: the loser's
            # insert waits for the winner's commit, then fails here (a savepoint, so the
            # transaction can still read the winner).
            with transaction.atomic():
                template = CouponTemplate.objects.create(
                    code=code, version=1, created_at=now, updated_at=now, **terms
                )
        except IntegrityError:
            raise _code_taken(code) from None
        _freeze(template, now)
        return template


def template_update(*, template_id, **terms) -> CouponTemplate:
    """Edit a template: the edit becomes a new version; issued coupons keep theirs."""
    with transaction.atomic():
        template = CouponTemplate.objects.select_for_update().filter(pk=template_id).first()
        if template is None:
            raise NotFound(_("No such template."), template_id=template_id)
        merged = validate_edit(template, normalise_scope(resolve_return_policy(terms)))
        if merged == template.terms():
            return template
        now = clock.now()
        for field, value in merged.items():
            setattr(template, field, value)
        template.version += 1
        template.updated_at = now
        template.save()
        _freeze(template, now)
        return template


def template_set_issuable(*, template_id, issuable: bool) -> CouponTemplate:
    """Close (or reopen) a campaign: a closed template issues no coupons. Not a new version:
    issued coupons' terms are unchanged."""
    with transaction.atomic():
        template = CouponTemplate.objects.select_for_update().filter(pk=template_id).first()
        if template is None:
            raise NotFound(_("No such template."), template_id=template_id)
        if template.issuable != issuable:
            template.issuable = issuable
            template.updated_at = clock.now()
            template.save(update_fields=["issuable", "updated_at"])
        return template
