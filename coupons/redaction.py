"""What only holders of VIEW_CASE_DETAILS see (least-privilege reads).

Support and service clients see that a conflict case or a compensation exists, what it is
about and where it stands; not an operator's notes, the evidence behind a case, the money
promised, or what another caller was told under its Idempotency-Key. Every read that shows
these rows (the timeline, the API, the console, the admin) drops the model's own
`detail_fields` through `visible` or `redacted`; who may see them is
`coupons.identity.can_see_details`.

Some models hide fields on some rows only: a ledger row an approved compensation appended
(REVERSE, COMPENSATE) carries the compensation's reason and amount, so those rows' fields are
hidden like the compensation's own (`detail_fields_by_op_type`).
"""


def detail_fields(model, *, op_type: str | None = None) -> tuple[str, ...]:
    by_op_type = getattr(model, "detail_fields_by_op_type", {})
    return (*model.detail_fields, *by_op_type.get(op_type, ()))


def visible(model, values: dict, *, can_see_details: bool, op_type: str | None = None) -> dict:
    """`values` without the hidden fields (the timeline, the console)."""
    if can_see_details:
        return values
    hidden = detail_fields(model, op_type=op_type)
    return {name: value for name, value in values.items() if name not in hidden}


def redacted(model, values: dict, *, can_see_details: bool,
             op_type: str | None = None) -> dict:
    """`values` with the hidden fields null and named in `redacted` (the API's fixed shape)."""
    hidden = [] if can_see_details else [
        name for name in detail_fields(model, op_type=op_type) if name in values]
    return {**values, **dict.fromkeys(hidden), "redacted": hidden}
