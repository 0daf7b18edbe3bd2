"""Django's ModelBackend, reading a person with their permissions and group names in one query.

Every console page asks `has_perm` (the page's capability, then the navigation's) and its
header names the person's groups; Django's backend reads the user, then answers the first from
one cache filled by two queries (the user's own permissions and their groups'), and the header
costs a fourth. Here the session's user is read with both, in one query that fills both
caches on the user object of this request: a change of groups or permissions holds from the
next request on, with nothing kept in the session to invalidate. A user object from elsewhere
(an admin form, a test) reads them in one query when first asked.
"""

import json

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection, connections, router
from django.db.models.expressions import RawSQL

# The user's groups with each one's permissions, the user's own permissions, and, for a
# superuser, every permission (a group without permissions still names itself). {user} and
# {superuser} are parameters, or the user row's columns when read with the user.
ACCESS_SQL = """
SELECT g.name, ct.app_label, p.codename, g.id
  FROM {user_groups} ug JOIN {group} g ON g.id = ug.group_id
  LEFT JOIN {group_perms} gp ON gp.group_id = g.id
  LEFT JOIN {perm} p ON p.id = gp.permission_id
  LEFT JOIN {ct} ct ON ct.id = p.content_type_id
 WHERE ug.user_id = {user}
UNION ALL
SELECT NULL, ct.app_label, p.codename, NULL
  FROM {user_perms} up JOIN {perm} p ON p.id = up.permission_id
  JOIN {ct} ct ON ct.id = p.content_type_id
 WHERE up.user_id = {user}
UNION ALL
SELECT NULL, ct.app_label, p.codename, NULL
  FROM {perm} p JOIN {ct} ct ON ct.id = p.content_type_id
 WHERE {superuser}
"""


def _access_sql(user_model, *, user: str, superuser: str) -> str:
    return ACCESS_SQL.format(
        user_groups=user_model.groups.through._meta.db_table, group=Group._meta.db_table,
        group_perms=Group.permissions.through._meta.db_table, perm=Permission._meta.db_table,
        ct=ContentType._meta.db_table,
        user_perms=user_model.user_permissions.through._meta.db_table,
        user=user, superuser=superuser)


def _with_access(user_model) -> RawSQL:
    """The access rows as a JSON array, a column of the user's own row."""
    table = connection.ops.quote_name(user_model._meta.db_table)
    rows = _access_sql(user_model, user=f"{table}.id", superuser=f"{table}.is_superuser")
    return RawSQL("(SELECT coalesce(json_agg(json_build_array(a.name, a.app, a.codename, "
                  f"a.group_id)), '[]')::text FROM ({rows}) AS a(name, app, codename, group_id))",
                  ())


def _remember(user_obj, rows) -> None:
    user_obj._perm_cache = {f"{app_label}.{codename}"
                            for _, app_label, codename, _ in rows if codename}
    user_obj._group_names = [name for _, name in sorted(
        {(group_id, name) for name, _, _, group_id in rows if name is not None})]


class OneQueryModelBackend(ModelBackend):
    def get_user(self, user_id):
        """The session's user, with their permissions and groups (one query a request)."""
        user_model = get_user_model()
        user = user_model._default_manager.annotate(access=_with_access(user_model)) \
            .filter(pk=user_id).first()
        if user is None or not self.user_can_authenticate(user):
            return None
        _remember(user, json.loads(user.access))
        return user

    def get_all_permissions(self, user_obj, obj=None):
        if not user_obj.is_active or user_obj.is_anonymous or obj is not None:
            return set()
        if not hasattr(user_obj, "_perm_cache"):
            with connections[router.db_for_read(Permission)].cursor() as cursor:
                cursor.execute(_access_sql(type(user_obj), user="%(user)s",
                                           superuser="%(superuser)s"),
                               {"user": user_obj.pk, "superuser": user_obj.is_superuser})
                _remember(user_obj, cursor.fetchall())
        return user_obj._perm_cache


def group_names(user) -> list[str]:
    """The names of the user's groups, read with their permissions (one query a request)."""
    user.get_all_permissions()
    return getattr(user, "_group_names", [])
