"""Where a coupon applies: its template version's stores (none: every store) and channel
(none: every channel). The API's and the console's filters and the substitute search ask
here, so "applies at a store" means one thing everywhere."""

from django.db.models import Q


def applies_at_store(store: str, *, path: str = "") -> Q:
    """Rows whose scope includes `store`: it is named, or the scope is every store. Both arms
    are answered by the GIN index on `stores`."""
    return Q(**{f"{path}stores__contains": [store]}) | Q(**{f"{path}stores": []})


def applies_to_channel(channel: str, *, path: str = "") -> Q:
    return Q(**{f"{path}channel__in": [channel, ""]})


def covers(terms, *, path: str = "") -> Q:
    """Rows whose scope covers `terms`'s: every store it applies at (or all stores) and its
    channel (or every channel). A scope of all stores or every channel is covered only by one
    as wide."""
    stores = Q(**{f"{path}stores": []})
    if terms.stores:
        stores |= Q(**{f"{path}stores__contains": terms.stores})
    channel = Q(**{f"{path}channel": ""})
    if terms.channel:
        channel |= Q(**{f"{path}channel": terms.channel})
    return stores & channel
