"""The SQL our protecting triggers are installed with: pgtrigger's, minus its off switch.

pgtrigger's own template (`pgtrigger.compiler.UpsertTriggerSql`) begins every trigger function
with "return at once if this trigger is named in the session setting `pgtrigger.ignore`", and
any role may SET that setting: a login that can write rows could switch the history's triggers
off for its own session. This template is the same minus that branch, so what a
trigger refuses it refuses to every session; only the table's owner (ALTER TABLE ... DISABLE
TRIGGER) or a superuser (session_replication_role) can get past it, and the application role
is neither (docs/evidence.md).

Migrations name this class by its import path: never edit the template in place (an applied
migration would then install other SQL than it did). A new version is a new class.
"""

from pgtrigger.compiler import UpsertTriggerSql


class UnswitchableTriggerSql(UpsertTriggerSql):
    def get_template(self) -> str:
        return """
            CREATE OR REPLACE FUNCTION {pgid}()
            RETURNS TRIGGER AS $$
                {declare}
                BEGIN
                    {func}
                END;
            $$ LANGUAGE plpgsql;

            DROP TRIGGER IF EXISTS {pgid} ON {table};
            CREATE {constraint} TRIGGER {pgid}
                {when} {operation} ON {table}
                {timing}
                {referencing}
                FOR EACH {level} {condition}
                EXECUTE PROCEDURE {execute};

            COMMENT ON TRIGGER {pgid} ON {table} IS '{hash}';
        """
