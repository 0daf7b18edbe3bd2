from operations.management.commands._scan_options import ScannerCommand
from operations.scanners import scan_final_payment_windows


class Command(ScannerCommand):
    help = ("Final-payment window scan: one FinalPaymentWindowOpened event (through the outbox) "
            "per presale order whose final-payment window has opened, with its coupon and the "
            "discount it saves, once per order.")
    scan = staticmethod(scan_final_payment_windows)
