"""`manage.py seed_demo`: console users, a service client, templates and coupons in every state.

Every coupon history here is made the way production makes it: commands call coupons.services
as the order service and the scanners do, and order, payment and refund facts go through the
inbox (`Story.deliver`, the code path of POST /api/v1/events), whose handlers lock, redeem,
release, decide refunds and open conflict cases. The ledger, leases, redemptions, outbox, cases,
settlements, compensations and rejection log are the ones the real code writes, so the console,
its queues and the per-coupon check show true data. Histories are laid over the last 40 days
with a FrozenClock, so their times read like real ones.
"""

from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError
from django.db.models import Count
from django.utils import timezone

from coupons.api.event_serializers import PAYLOADS
from coupons.capabilities import CLIENT_GRANTS
from coupons.clock import FrozenClock, use_clock
from coupons.errors import CouponError
from coupons.events.inbox import inbox_receive
from coupons.ledger_reasons import reason
from coupons.models import (
    Channel,
    CouponKind,
    CouponStatus,
    CouponTemplate,
    ExpiryDuringLock,
    FactType,
    ServiceClient,
    UserCoupon,
)
from coupons.services import (
    CommandContext,
    LeaseProof,
    coupon_expire,
    coupon_issue,
    coupon_lock,
    coupon_redeem,
    coupon_release,
    coupon_renew,
    coupon_void,
    service_client_create,
    template_create,
)

DEMO_CLIENT = "demo-order-service"
TEMPLATE_PREFIX = "demo-"
# The late-payment incident (docs/design.md): order A's late redeem after order B re-locked the
# coupon.
INCIDENT_USER = "user_demo_1001"
INCIDENT_ORDER_A = "order_demo_A"
INCIDENT_ORDER_B = "order_demo_B"

# username, password, superuser?, group
DEMO_USERS = [
    ("admin", "admin-demo", True, None),
    ("support", "support-demo", False, "support"),
    ("operator", "operator-demo", False, "operator"),
    ("policy", "policy-demo", False, "policy_admin"),
]

# Who runs each kind of command: the ledger's actor column, named as the real callers name
# themselves (an API client, the event coordinator, the scanners, a console user).
ORDER_SERVICE = f"client:{DEMO_CLIENT}"
ORDER_CLOSED_HANDLER = "system:coordinator"
LEASE_SCANNER = "system:lease-scanner"
EXPIRY_SCANNER = "system:expiry-scanner"
GRANTS = "system:campaign-grant"


def demo_exists() -> bool:
    return (
        ServiceClient.objects.filter(name=DEMO_CLIENT).exists()
        or CouponTemplate.objects.filter(code__startswith=TEMPLATE_PREFIX).exists()
    )


class Story:
    """Calls the services the way their real callers do, on a clock we move by hand."""

    def __init__(self, clock: FrozenClock, start: datetime):
        self.clock = clock
        self.start = start
        self.refusals = []
        self.sender: ServiceClient | None = None  # the demo client, once made

    def deliver(self, fact_type: str, order_id: str, message_id: str = "", **payload) -> dict:
        """Send a fact as the order, payment or refund service does: validated by the API's
        payload serializer, then into the inbox (POST /api/v1/events). Answers its outcome."""
        checked = PAYLOADS[fact_type](data={"order_id": order_id, **payload})
        checked.is_valid(raise_exception=True)
        outcome = inbox_receive(
            message_id=message_id or f"msg_{fact_type}_{order_id}", fact_type=fact_type,
            order_id=order_id, occurred_at=self.clock.now(), payload=dict(checked.data),
            sender=ORDER_SERVICE, sender_scope=self.sender.idempotency_scope,
        ).message.outcome
        if "error_code" in outcome:
            self.refusals.append(outcome["error_code"])
        return outcome

    def profile(self, user_id: str, phone: str, nickname: str) -> dict:
        """Send a customer's profile as the user service does: its phone kept only hashed."""
        checked = PAYLOADS[FactType.CUSTOMER_PROFILE_UPDATED](
            data={"user_id": user_id, "phone": phone, "nickname": nickname})
        checked.is_valid(raise_exception=True)
        return inbox_receive(
            message_id=f"msg_profile_{user_id}", fact_type=FactType.CUSTOMER_PROFILE_UPDATED,
            order_id="", occurred_at=self.clock.now(), payload=checked.stored(),
            sender=ORDER_SERVICE, sender_scope=self.sender.idempotency_scope,
        ).message.outcome

    def at(self, day: int, hhmm: str) -> datetime:
        """Move the clock to `day` days after the start, at hh:mm UTC."""
        hours, minutes = (int(part) for part in hhmm.split(":"))
        moment = self.start + timedelta(days=day, hours=hours, minutes=minutes)
        self.clock.set(moment)
        return moment

    def later(self, **delta) -> datetime:
        return self.clock.advance(**delta)

    @staticmethod
    def ctx(actor: str, key: str = "") -> CommandContext:
        return CommandContext(actor=actor, idempotency_key=key)

    def issue(self, template, user_id: str):
        return coupon_issue(template_id=template.pk, user_id=user_id, ctx=self.ctx(GRANTS)).coupon

    def lock(self, coupon, order_id: str, amount: str, **lease):
        return coupon_lock(
            coupon_id=coupon.pk, order_id=order_id, user_id=coupon.user_id,
            order_amount=Decimal(amount), quote_id=f"quote_{order_id}",
            ctx=self.ctx(ORDER_SERVICE, f"{order_id}:lock"), **lease,
        )

    @staticmethod
    def proof(locked) -> LeaseProof:
        """What the order service holds after LOCK: its order id, its token, the version."""
        return LeaseProof.from_token(
            order_id=locked.lock.order_id, lock_token=locked.lock_token,
            expected_version=locked.state_version,
        )

    def redeem(self, coupon, locked, payment_id: str):
        return coupon_redeem(
            coupon_id=coupon.pk, lease=self.proof(locked),
            payment_id=payment_id, ctx=self.ctx(ORDER_SERVICE, f"{payment_id}:redeem"),
        )

    def release_by_handler(self, coupon, locked, *, actor: str, reason: str):
        # Internal callers prove the lease with lock id + stored hash + the version they read,
        # never with the coupon id alone (docs/design.md).
        return coupon_release(
            coupon_id=coupon.pk, lease=LeaseProof.from_lock(
                locked.lock, expected_version=locked.state_version),
            reason=reason, ctx=self.ctx(actor),
        )

    def refused(self, command, *args, **kwargs) -> CouponError:
        """Run a command the story expects to be refused; the service logs the refusal."""
        try:
            command(*args, **kwargs)
        except CouponError as error:
            self.refusals.append(error.code)
            return error
        raise AssertionError(f"{command.__name__} was expected to be refused")


class Command(BaseCommand):
    help = (
        "Fill an empty database with demo console users, a service client, templates and "
        "coupons in every state (histories made through the services). No-op if already seeded."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--key-file", type=Path,
            help="Also write the demo API key to this file (it is shown only once).",
        )

    def handle(self, *args, key_file=None, **options):
        if not settings.COUPONS_DEMO:
            # It makes a superuser whose password is printed in the README: never on a
            # database that is not a demo's.
            raise CommandError("seed_demo makes demo logins (admin / admin-demo): it runs only "
                               "with COUPONS_DEMO=1, as bin/run-demo sets.")
        if demo_exists():
            self.stdout.write(
                "Demo data is already there; nothing to do. (To start over: bin/run-demo "
                "--reset.)"
            )
            return

        real_now = timezone.now().replace(microsecond=0)
        # Midnight UTC 40 days ago, so "day N" of the story is a calendar day.
        start = (real_now - timedelta(days=40)).replace(hour=0, minute=0, second=0,
                                                        microsecond=0)
        users = self.create_users()
        with use_clock(FrozenClock(start)) as clock:
            story = Story(clock, start)
            story.at(0, "08:30")
            client, key = service_client_create(
                name=DEMO_CLIENT, capabilities=CLIENT_GRANTS.values(), fact_types=FactType.values
            )
            story.sender = client
            templates = self.create_templates(story, real_now)
            incident = self.seed_coupons(story, templates, real_now)
            self.seed_refunds(story, templates, real_now)
            self.seed_profiles(story)

        if key_file is not None:
            key_file.write_text(key + "\n")
            key_file.chmod(0o600)
        self.print_summary(users, client, key, templates, incident, story)

    # -- console users ---------------------------------------------------------------------

    def create_users(self) -> list[str]:
        User = get_user_model()
        made = []
        for username, password, superuser, group_name in DEMO_USERS:
            if User.objects.filter(username=username).exists():
                # Someone made this login already; never reset a password we did not set.
                self.stdout.write(f"User {username!r} exists; left as it is.")
                continue
            if superuser:
                User.objects.create_superuser(username, f"{username}@demo.invalid", password)
            else:
                # Staff only to sign in to the console; what they may do comes from the group
                # (made by a migration), never from being staff.
                user = User.objects.create_user(
                    username, f"{username}@demo.invalid", password, is_staff=True
                )
                user.groups.add(Group.objects.get(name=group_name))
            made.append(username)
        return made

    # -- templates -------------------------------------------------------------------------

    def create_templates(self, story: Story, real_now: datetime) -> dict[str, CouponTemplate]:
        start = story.start
        specs = {
            "amount": dict(
                code="demo-30-off-200", name="满200减30",
                kind=CouponKind.AMOUNT_OFF, face_value=Decimal("30.00"),
                min_order_amount=Decimal("200.00"), valid_days=45,
            ),
            "percent": dict(
                code="demo-15pct-cap-50", name="满100享85折，最高减50",
                kind=CouponKind.PERCENT_OFF, percent_off=Decimal("15.00"),
                max_discount=Decimal("50.00"), min_order_amount=Decimal("100.00"), valid_days=60,
                channel=Channel.DELIVERY,  # a delivery-only campaign, at every store
            ),
            "exchange": dict(
                code="demo-free-xiaolongbao", name="兑换券：老街小笼馆鲜肉小笼包一笼",
                kind=CouponKind.EXCHANGE, face_value=Decimal("28.00"), valid_days=30,
                returnable=False,  # exchange coupons are one-time: a refund never returns them
                # The one shop's own counter: its two stores, eaten in.
                stores=["store_demo_laojie_01", "store_demo_laojie_02"], channel=Channel.DINE_IN,
            ),
            "presale": dict(
                code="demo-presale-100-off", name="年夜饭预售：满1000减100，先付定金",
                kind=CouponKind.AMOUNT_OFF, face_value=Decimal("100.00"),
                min_order_amount=Decimal("1000.00"),
                valid_from=start, valid_until=(real_now + timedelta(days=10)).replace(
                    hour=0, minute=0, second=0, microsecond=0),
                expiry_during_lock=ExpiryDuringLock.STRICT,
            ),
            "honours": dict(
                code="demo-presale-honoured", name="预售满400减40（过期仍可用）",
                kind=CouponKind.AMOUNT_OFF, face_value=Decimal("40.00"),
                min_order_amount=Decimal("400.00"), valid_days=30,
                expiry_during_lock=ExpiryDuringLock.LOCK_HONORS,
            ),
            "strict": dict(
                code="demo-presale-strict", name="预售满400减40（尾款逾期即失效）",
                kind=CouponKind.AMOUNT_OFF, face_value=Decimal("40.00"),
                min_order_amount=Decimal("400.00"), valid_days=30,
                expiry_during_lock=ExpiryDuringLock.STRICT,
            ),
            "substitute": dict(
                code="demo-20-off-substitute", name="满150减20（锁定中过期则换券）",
                kind=CouponKind.AMOUNT_OFF, face_value=Decimal("20.00"),
                min_order_amount=Decimal("150.00"), valid_days=30,
                expiry_during_lock=ExpiryDuringLock.SUBSTITUTE,
                # Delivery only: the spare "amount" coupon (every store, every channel) covers
                # it, so the final payment can take it instead.
                channel=Channel.DELIVERY,
            ),
            "window": dict(
                code="demo-spring-festival", name="春节满300减50（限时）",
                kind=CouponKind.AMOUNT_OFF, face_value=Decimal("50.00"),
                min_order_amount=Decimal("300.00"),
                valid_from=start, valid_until=start + timedelta(days=20),
            ),
        }
        return {name: template_create(**spec) for name, spec in specs.items()}

    # -- customers -------------------------------------------------------------------------

    # The customers the demo's stories are about, as the user service knows them (phone
    # numbers in the spellings people type them, to show that any spelling finds them).
    PROFILES = [
        (INCIDENT_USER, "138 1234 5678", "王小明"),
        ("user_demo_1002", "+86 139-0000-1002", "李娜"),
        ("user_demo_1003", "13700001003", "张伟"),
        ("user_demo_1004", "0086 136 0000 1004", "陈静"),
        ("user_demo_1005", "135-0000-1005", "刘洋"),
        ("user_demo_1006", "13400001006", "Amy Chen"),
    ]

    def seed_profiles(self, story: Story) -> None:
        for user_id, phone, nickname in self.PROFILES:
            story.profile(user_id, phone, nickname)

    # -- coupons ---------------------------------------------------------------------------

    def seed_coupons(self, story: Story, t: dict, real_now: datetime) -> UserCoupon:
        incident = self.incident(story, t["amount"])
        self.used(story, t)
        self.presales_past_validity(story, t)
        self.locked(story, t, real_now)
        self.available(story, t)
        self.expired(story, t)
        self.voided(story, t)
        self.mistaken_redeem(story, t)
        self.last_day(story, t, real_now)
        return incident

    def incident(self, story: Story, template) -> UserCoupon:
        """The late-payment incident, replayed on today's code as the facts arrived: the late
        payment is refused and opens a conflict case for an operator."""
        story.at(30, "09:12")
        coupon = story.issue(template, INCIDENT_USER)

        story.at(32, "20:41")
        story.lock(coupon, INCIDENT_ORDER_A, "268.00")
        # 20:43 order A is paid, but the payment callback is delayed in the queue. The order
        # service's close job sees no payment and closes the order; the coordinator releases.
        story.at(32, "20:56")
        story.deliver(FactType.ORDER_CLOSED, INCIDENT_ORDER_A)
        story.at(32, "21:02")
        story.lock(coupon, INCIDENT_ORDER_B, "312.00")
        # A's payment fact finally arrives. The coordinator proves A's stored lease, which has
        # ended: TOKEN_MISMATCH (in the old system this, by coupon id only, marked it USED),
        # and a conflict case recommends refunding A its discount.
        story.at(32, "21:04")
        story.deliver(FactType.PAYMENT_SUCCEEDED, INCIDENT_ORDER_A, payment_id="payment_demo_PA")
        story.at(32, "21:05")
        story.deliver(FactType.PAYMENT_SUCCEEDED, INCIDENT_ORDER_B, payment_id="payment_demo_PB")
        return coupon

    def used(self, story: Story, t: dict) -> None:
        # Percent off capped: 15% of 420 is 63, the cap makes it 50.
        story.at(12, "11:20")
        coupon = story.issue(t["percent"], "user_demo_1002")
        story.at(15, "19:02")
        locked = story.lock(coupon, "order_demo_1201", "420.00")
        story.later(minutes=3)
        story.redeem(coupon, locked, "payment_demo_1201")

        story.at(25, "07:45")
        coupon = story.issue(t["exchange"], "user_demo_1003")
        story.at(26, "08:10")
        locked = story.lock(coupon, "order_demo_1301", "28.00")
        story.later(minutes=1)
        story.redeem(coupon, locked, "payment_demo_1301")

        # Presale: the deposit fact locks, leased until the final-payment deadline plus a day
        # of grace; the final payment fact redeems, twelve days later, inside the validity.
        story.at(5, "10:00")
        coupon = story.issue(t["presale"], "user_demo_1004")
        story.at(8, "20:00")
        self.deposit(story, coupon, "order_demo_1401", "1299.00",
                     deadline=story.start + timedelta(days=20))
        story.at(20, "09:31")
        story.deliver(FactType.FINAL_PAYMENT_SUCCEEDED, "order_demo_1401",
                      payment_id="payment_demo_1401_final")

    @staticmethod
    def deposit(story: Story, coupon, order_id: str, amount: str, *, deadline) -> dict:
        return story.deliver(
            FactType.DEPOSIT_PAID, order_id, coupon_id=coupon.pk, user_id=coupon.user_id,
            order_amount=amount, final_payment_deadline=deadline.isoformat(),
            quote_id=f"quote_{order_id}",
        )

    def presales_past_validity(self, story: Story, t: dict) -> None:
        """A presale whose coupon lapses between deposit and final payment, under each
        strategy: honoured, paid in full (STRICT), substituted, and compensated when no
        substitute fits (a proposal waiting for an operator)."""
        deadline = story.start + timedelta(days=35)
        cases = [
            ("honours", "user_demo_1010", "order_demo_2101", []),
            ("strict", "user_demo_1011", "order_demo_2102", []),
            ("substitute", "user_demo_1012", "order_demo_2103", ["amount"]),
            ("substitute", "user_demo_1013", "order_demo_2104", []),
        ]
        for template, user_id, order_id, spares in cases:
            story.at(2, "10:00")  # valid for 30 days: until day 32
            coupon = story.issue(t[template], user_id)
            for spare in spares:  # a coupon of the same kind the final payment may use instead
                story.at(20, "10:00")
                story.issue(t[spare], user_id)
            story.at(26, "19:30")
            self.deposit(story, coupon, order_id, "600.00", deadline=deadline)
            story.at(34, "11:15")
            story.deliver(FactType.FINAL_PAYMENT_SUCCEEDED, order_id,
                          payment_id=f"payment_{order_id}_final")

    def locked(self, story: Story, t: dict, real_now: datetime) -> None:
        # A presale deposit paid four days ago; final payment is due in three days.
        story.at(6, "12:00")
        coupon = story.issue(t["presale"], "user_demo_1005")
        story.at(36, "21:15")
        self.deposit(story, coupon, "order_demo_1501", "1588.00",
                     deadline=real_now + timedelta(days=3))

        # An order being paid right now: locked, then its lease renewed once.
        story.at(30, "09:40")
        coupon = story.issue(t["amount"], "user_demo_1006")
        story.clock.set(real_now - timedelta(minutes=20))
        locked = story.lock(coupon, "order_demo_1601", "239.00", lease_seconds=900)
        story.clock.set(real_now - timedelta(minutes=8))
        coupon_renew(
            coupon_id=coupon.pk, lease=story.proof(locked), lease_seconds=1800,
            ctx=story.ctx(ORDER_SERVICE, "order_demo_1601:renew:1"),
        )

    def available(self, story: Story, t: dict) -> None:
        story.at(35, "10:00")
        story.issue(t["amount"], "user_demo_1002")

        story.at(38, "16:30")
        story.issue(t["exchange"], "user_demo_1005")

        # Payment failed: the order service releases with its own token; the coupon comes back.
        story.at(20, "13:00")
        coupon = story.issue(t["percent"], "user_demo_1003")
        story.at(22, "18:22")
        locked = story.lock(coupon, "order_demo_1302", "180.00")
        story.later(minutes=4)
        coupon_release(
            coupon_id=coupon.pk, lease=story.proof(locked), reason="支付失败",
            ctx=story.ctx(ORDER_SERVICE, "order_demo_1302:release"),
        )

        # An abandoned checkout: the lease lapses and the lease scanner releases it; a later
        # try with a too-small order is refused (THRESHOLD_NOT_MET, in the rejection log).
        story.at(28, "09:00")
        coupon = story.issue(t["substitute"], "user_demo_1004")
        story.at(33, "14:10")
        locked = story.lock(coupon, "order_demo_1402", "166.00")
        story.later(minutes=20)
        story.release_by_handler(coupon, locked, actor=LEASE_SCANNER,
                                 reason=reason("lease_expired"))
        story.at(34, "12:00")
        story.refused(story.lock, coupon, "order_demo_1403", "99.00")

    def last_day(self, story: Story, t: dict, real_now: datetime) -> None:
        """Checkouts over the last day, so the dashboard's hourly chart shows traffic: most
        redeem, some first try an order below the threshold (refused), some payments fail."""
        for n, hours_ago in enumerate((22, 21, 18, 16, 13, 11, 9, 7, 5, 3, 2)):
            order = f"order_demo_30{n:02d}"
            story.clock.set(real_now - timedelta(hours=hours_ago, minutes=40))
            coupon = story.issue(t["amount"], f"user_demo_30{n:02d}")
            story.later(minutes=10)
            if n % 3 == 2:
                story.refused(story.lock, coupon, f"{order}_small", "120.00")
                story.later(minutes=5)
            locked = story.lock(coupon, order, "260.00")
            story.later(minutes=3)
            if n % 4 == 3:
                coupon_release(coupon_id=coupon.pk, lease=story.proof(locked),
                               reason="支付失败",
                               ctx=story.ctx(ORDER_SERVICE, f"{order}:release"))
            else:
                story.redeem(coupon, locked, f"payment_{order}")

    def expired(self, story: Story, t: dict) -> None:
        # Fixed window ended on day 20; the expiry scanner expires the unused coupon.
        story.at(1, "10:00")
        coupon = story.issue(t["window"], "user_demo_1002")
        story.at(20, "00:05")
        coupon_expire(coupon_id=coupon.pk, expected_version=coupon.state_version,
                      ctx=story.ctx(EXPIRY_SCANNER))

        # N days after issue: a lock just after valid_until is refused (COUPON_EXPIRED), and the
        # scanner expires it a little later.
        story.at(2, "08:00")
        coupon = story.issue(t["exchange"], "user_demo_1006")
        story.at(32, "08:30")
        story.refused(story.lock, coupon, "order_demo_1602", "28.00")
        story.at(32, "09:00")
        coupon_expire(coupon_id=coupon.pk, expected_version=coupon.state_version,
                      ctx=story.ctx(EXPIRY_SCANNER))

        # Locked inside the window for an order paid in two steps; the final payment never came
        # and the order closed after the window ended, so the release lands on EXPIRED.
        story.at(1, "11:00")
        coupon = story.issue(t["window"], "user_demo_1003")
        story.at(18, "20:00")
        locked = story.lock(coupon, "order_demo_1303", "560.00",
                            lease_until=story.start + timedelta(days=21, hours=12))
        story.at(21, "12:00")
        story.release_by_handler(
            coupon, locked, actor=ORDER_CLOSED_HANDLER,
            reason=reason("order_closed_unpaid", order="order_demo_1303"),
        )

    def voided(self, story: Story, t: dict) -> None:
        story.at(28, "09:05")
        coupon = story.issue(t["substitute"], "user_demo_1005")
        story.at(31, "17:00")
        coupon_void(coupon_id=coupon.pk, expected_version=coupon.state_version,
                    reason="活动提前结束", ctx=story.ctx("user:operator"))

        # VOID ends a live lease too (the lease becomes RELEASED).
        story.at(24, "10:00")
        coupon = story.issue(t["percent"], "user_demo_1006")
        story.at(27, "23:48")
        locked = story.lock(coupon, "order_demo_1603", "640.00")
        story.later(minutes=3)
        coupon_void(coupon_id=coupon.pk, expected_version=locked.state_version,
                    reason="风控：订单被反欺诈系统拦截", ctx=story.ctx("system:risk"))

    # -- refunds ---------------------------------------------------------------------------

    def seed_refunds(self, story: Story, t: dict, real_now: datetime) -> None:
        """After-sale decisions under the default return policy, sent the way the refund
        service sends them: POST refunds (refund_receive) or a RefundSucceeded fact."""
        def refund(order_id, amount, refund_type, risk_flag=False):
            return story.deliver(
                FactType.REFUND_SUCCEEDED, order_id, refund_id=f"refund_{order_id}",
                payment_id=f"payment_{order_id}", refund_amount=amount,
                refund_type=refund_type, risk_flag=risk_flag,
            )

        # A full refund two days after payment: the coupon comes back (RETURN).
        story.at(14, "10:00")
        coupon = story.issue(t["amount"], "user_demo_1007")
        story.at(16, "12:30")
        locked = story.lock(coupon, "order_demo_1701", "300.00")
        story.later(minutes=2)
        story.redeem(coupon, locked, "payment_order_demo_1701")
        story.at(18, "09:15")
        refund("order_demo_1701", "270.00", "FULL")

        # A partial refund: the coupon stays USED; its share of the discount is pro-rated.
        story.at(15, "10:00")
        coupon = story.issue(t["percent"], "user_demo_1007")
        story.at(17, "18:00")
        locked = story.lock(coupon, "order_demo_1702", "400.00")
        story.later(minutes=2)
        story.redeem(coupon, locked, "payment_order_demo_1702")
        story.at(19, "11:40")
        refund("order_demo_1702", "100.00", "PARTIAL")

        # The dumplings and a soy milk, all refunded: an exchange coupon is one-time and stays
        # USED.
        story.at(15, "10:05")
        coupon = story.issue(t["exchange"], "user_demo_1008")
        story.at(17, "08:20")
        locked = story.lock(coupon, "order_demo_1801", "45.00")
        story.later(minutes=1)
        story.redeem(coupon, locked, "payment_order_demo_1801")
        story.at(17, "15:00")
        refund("order_demo_1801", "17.00", "FULL")

        # A presale deposit refunded before the final payment: the lease ends at once and the
        # coupon is AVAILABLE again at once, not held until deadline + grace.
        story.at(20, "10:00")
        coupon = story.issue(t["presale"], "user_demo_1008")
        story.at(30, "20:00")
        self.deposit(story, coupon, "order_demo_1802", "1200.00",
                     deadline=real_now + timedelta(days=5))
        story.at(31, "09:00")
        story.deliver(FactType.REFUND_SUCCEEDED, "order_demo_1802",
                      payment_id="payment_order_demo_1802_deposit",
                      refund_id="refund_order_demo_1802", refund_amount="200.00",
                      refund_type="FULL")

        # A refund flagged by the risk check waits for an operator (MANUAL_REVIEW).
        story.at(21, "10:00")
        coupon = story.issue(t["amount"], "user_demo_1009")
        story.at(33, "16:00")
        locked = story.lock(coupon, "order_demo_1901", "520.00")
        story.later(minutes=3)
        story.redeem(coupon, locked, "payment_order_demo_1901")
        story.at(37, "10:30")
        refund("order_demo_1901", "490.00", "FULL", risk_flag=True)

        # Another flagged one, from yesterday: the approvals queue has two to decide.
        story.at(25, "10:00")
        coupon = story.issue(t["percent"], "user_demo_1014")
        story.at(38, "12:10")
        locked = story.lock(coupon, "order_demo_1902", "360.00")
        story.later(minutes=2)
        story.redeem(coupon, locked, "payment_order_demo_1902")
        story.at(39, "09:45")
        refund("order_demo_1902", "306.00", "FULL", risk_flag=True)

    def mistaken_redeem(self, story: Story, t: dict) -> None:
        """A redeem an operator made by mistake, and a colleague's proposal to reverse it.

        Order 2001's payment came after the order was closed, so a conflict case recommended a
        compensating redeem. The operator applied it, but the payment had been refunded in
        full in the meantime. The admin proposes reversing that REDEEM; the proposal waits for
        a second person (sign in as `operator`: GET /api/v1/compensations, then approve).
        """
        from coupons.models import OperationType
        from coupons.services.cases import case_resolve
        from refunds.services.compensation_propose import compensation_propose

        order, payment = "order_demo_2001", "payment_demo_2001"

        story.at(33, "10:00")
        coupon = story.issue(t["amount"], "user_demo_1007")
        story.at(36, "18:05")
        story.lock(coupon, order, "245.00")
        story.at(36, "18:35")
        story.deliver(FactType.ORDER_CLOSED, order)
        story.at(36, "18:41")
        case_id = story.deliver(FactType.PAYMENT_SUCCEEDED, order, payment_id=payment)["case_id"]
        story.at(37, "09:20")
        case_resolve(case_id=case_id, action="APPLY", note="支付晚到：为这笔支付补核销",
                     ctx=story.ctx("user:operator", f"case-{case_id}-apply"))
        story.at(37, "11:02")
        compensation_propose(
            coupon_id=coupon.pk,
            operation_id=coupon.operations.get(op_type=OperationType.REDEEM).pk,
            reason=f"案件 {case_id} 误处理：{payment} 已于 08:55 全额退款，早于案件处理。"
                   "券退还给顾客。",
            ctx=story.ctx("user:admin", f"{order}:reverse-redeem"),
        )

    # -- summary ---------------------------------------------------------------------------

    def print_summary(self, users, client, key, templates, incident, story) -> None:
        counts = dict(
            UserCoupon.objects.values_list("status").annotate(n=Count("id")).order_by()
        )
        out = self.stdout.write
        out(self.style.SUCCESS("Demo data created."))
        out(f"  templates: {', '.join(t.code for t in templates.values())}")
        out("  coupons:   " + ", ".join(f"{s} {counts.get(s, 0)}" for s in CouponStatus.values))
        out(f"  refusals:  {', '.join(story.refusals)} (see each coupon's rejection log)")
        out(f"  incident:  coupon {incident.pk} of {INCIDENT_USER}: {INCIDENT_ORDER_A} locked, "
            f"order closed, {INCIDENT_ORDER_B} locked, A's late payment refused (conflict case "
            "opened), B redeemed")
        out(f"  customers: {len(self.PROFILES)} profiles; search 13812345678 (or 王小明) for "
            f"{INCIDENT_USER}'s page")
        if users:
            out("  logins:    " + ", ".join(
                f"{name} / {password}" for name, password, _, _ in DEMO_USERS if name in users))
        out(f"  API key of {client.name!r} (shown once, only its hash is stored):")
        out(key)
