from operations.management.commands._scan_options import ScannerCommand
from operations.scanners import scan_presale_expiry


class Command(ScannerCommand):
    help = ("Presale expiry scan: one CouponExpiresBeforeFinalPayment event (through the outbox) "
            "per STRICT or SUBSTITUTE presale lease whose coupon expires before the order's "
            "final-payment deadline.")
    scan = staticmethod(scan_presale_expiry)
