from operations.management.commands._scan_options import ScannerCommand
from operations.scanners import expire_coupons


class Command(ScannerCommand):
    help = "Expiry scan: AVAILABLE coupons past valid_until become EXPIRED."
    scan = staticmethod(expire_coupons)
