from django.core.management.base import BaseCommand, CommandError

from coupons.capabilities import CLIENT_GRANTS
from coupons.models import FactType, ServiceClient
from coupons.services import service_client_create


def names(value: str, known: dict, what: str) -> list:
    """`all`, or a comma-separated list of known names; anything else is a clear error."""
    if value.strip() == "all":
        return list(known.values())
    wanted = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise CommandError(f"Unknown {what}: {', '.join(unknown)}. Known: {', '.join(known)}.")
    return [known[name] for name in wanted]


class Command(BaseCommand):
    help = (
        "Create an API client with the commands and fact types it may send; prints its key as "
        "the last line (only a hash is stored). A client is granted nothing unless told."
    )

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument(
            "--allow", default="",
            help=f"Comma-separated capabilities ({', '.join(CLIENT_GRANTS)}), or 'all'.",
        )
        parser.add_argument(
            "--facts", default="",
            help=f"Comma-separated fact types ({', '.join(FactType.values)}), or 'all'.",
        )

    def handle(self, *args, name, allow, facts, **options):
        if ServiceClient.objects.filter(name=name).exists():
            raise CommandError(f"A client named {name!r} exists.")
        capabilities = names(allow, CLIENT_GRANTS, "capability")
        fact_types = names(facts, {t: t for t in FactType.values}, "fact type")
        client, key = service_client_create(
            name=name, capabilities=capabilities, fact_types=fact_types
        )
        if not capabilities and not fact_types:
            self.stdout.write(
                "This client may do nothing yet: give it --allow and/or --facts "
                "(for example --allow lock,redeem,release --facts PaymentSucceeded)."
            )
        else:
            self.stdout.write(
                f"Allowed: {', '.join(client.capabilities) or 'no commands'}; "
                f"facts: {', '.join(client.fact_types) or 'none'}."
            )
        self.stdout.write(f"Created service client {client.name!r}. Its key is shown once:")
        self.stdout.write(key)
