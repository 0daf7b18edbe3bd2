from cryptography.hazmat.primitives import serialization
from django.core.management.base import BaseCommand, CommandError

from coupons.evidence.checkpoint_keys import KeyProblem, key_id, public_key_text, signing_key


class Command(BaseCommand):
    help = ("Print the public key of LEDGER_SIGNING_KEY (base64 of its 32 bytes, or --pem): "
            "publish it; verify_ledger and scripts/auditors/verify_coupon_proof.py take it.")

    def add_arguments(self, parser):
        parser.add_argument("--pem", action="store_true", help="PEM instead of base64")

    def handle(self, *args, pem=False, **options):
        try:
            public = signing_key().public_key()
        except KeyProblem as problem:
            raise CommandError(str(problem)) from problem
        if pem:
            self.stdout.write(public.public_bytes(
                serialization.Encoding.PEM,
                serialization.PublicFormat.SubjectPublicKeyInfo).decode().rstrip())
        else:
            self.stdout.write(public_key_text(public))
        self.stderr.write(f"key id {key_id(public)}")
