from decimal import Decimal


def iso(moment) -> str | None:
    """ISO 8601 with offset, written the way the API's serializers write it."""
    if moment is None:
        return None
    value = moment.isoformat()
    return value[:-6] + "Z" if value.endswith("+00:00") else value


def money(amount: Decimal | None) -> str | None:
    return None if amount is None else f"{amount:.2f}"
