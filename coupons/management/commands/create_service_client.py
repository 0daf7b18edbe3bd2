from django.core.management.base import BaseCommand, CommandError

from coupons.models import ServiceClient
from coupons.services import service_client_create


class Command(BaseCommand):
    help = "Create an API client; prints its key as the last line (only a hash is stored)."

    def add_arguments(self, parser):
        parser.add_argument("name")

    def handle(self, *args, name, **options):
        if ServiceClient.objects.filter(name=name).exists():
            raise CommandError(f"A client named {name!r} exists.")
        client, key = service_client_create(name=name)
        self.stdout.write(f"Created service client {client.name!r}. Its key is shown once:")
        self.stdout.write(key)
