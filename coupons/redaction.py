"""What only holders of VIEW_CASE_DETAILS see (issue 6, least-privilege reads).

Support and service clients see that a conflict case or a compensation exists, what it is
about and where it stands; not an operator's notes, the evidence behind a case, the money
promised, or what another caller was told under its Idempotency-Key. Every read that shows
these rows (the timeline, the case API, the admin) drops the model's own `detail_fields`
through `visible`; who may see them is `coupons.api.permissions.can_see_details`.
"""


def visible(model, values: dict, *, can_see_details: bool) -> dict:
    if can_see_details:
        return values
    hidden = model.detail_fields
    return {name: value for name, value in values.items() if name not in hidden}
