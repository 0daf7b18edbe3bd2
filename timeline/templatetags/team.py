"""`{% team_tools "cases" %}`: a list page's export link and the person's saved filters."""

import uuid

from django import template
from django.urls import reverse

from timeline.capabilities import ConsoleCapability
from timeline.saved_filters import filter_query, saved_filters

register = template.Library()


@register.inclusion_tag("timeline/team/_tools.html", takes_context=True)
def team_tools(context, page: str):
    request = context["request"]
    query = filter_query(request.GET.urlencode())
    export = ""
    if request.user.has_perm(ConsoleCapability.EXPORT_LISTS.perm):
        export = reverse(f"console:{page}_export") + (f"?{query}" if query else "")
    return {
        "page": page, "query": query, "export": export, "csrf_token": context.get("csrf_token"),
        "saved": [{"filter": kept, "href": reverse(f"console:{page}")
                   + (f"?{kept.query}" if kept.query else ""),
                   "current": kept.query == query}
                  for kept in saved_filters(user=request.user, page=page)],
    }


@register.filter
def actionable(items) -> list:
    """The queue items of this page that still have buttons for this person."""
    return [item for item in items if item.get("forms")]


@register.simple_tag
def fresh_key() -> str:
    """A new key for a bulk form: sent twice, it replays each item instead of running it."""
    return str(uuid.uuid4())
