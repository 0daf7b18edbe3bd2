from operations.management.commands._scan_options import ScannerCommand
from operations.scanners import scan_leases


class Command(ScannerCommand):
    help = ("Lease scan: release LOCKED coupons whose lease has ended, or redeem them when the "
            "order's payment arrived.")
    scan = staticmethod(scan_leases)
