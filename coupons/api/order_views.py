"""An order's view of its coupon: the final-payment pre-check (coupons/final_payment_check.py)."""

from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from api.fields import MONEY
from api.identifiers import id_schema, validate_id
from coupons import clock
from coupons.errors import ValidationFailed
from coupons.final_payment_check import DISCOUNT_SOURCES, OUTCOMES, final_payment_check
from coupons.models import ExpiryDuringLock

MAX_ORDER_ID = 64  # as every order id the API takes


class FinalPaymentCheckOutput(serializers.Serializer):
    order_id = serializers.CharField()
    outcome = serializers.ChoiceField(
        choices=OUTCOMES, help_text="NOT_LOCKED, LOCKED_BY_ANOTHER_ORDER, EXPIRED or OK: stable "
                                    "codes; `message` says it for the customer.")
    message = serializers.CharField(help_text="For the customer, in the Accept-Language asked "
                                              "for (English or Chinese).")
    discount_amount = serializers.DecimalField(
        **MONEY, help_text="The discount the final payment will get under the template's "
                           "expiry strategy (0.00: charged in full).")
    discount_by = serializers.ChoiceField(
        choices=DISCOUNT_SOURCES, help_text="Who gives it: the coupon, a substitute coupon, a "
                                            "compensation paid back, or nobody.")
    coupon_id = serializers.IntegerField(allow_null=True)
    strategy = serializers.ChoiceField(choices=[*ExpiryDuringLock.values, ""],
                                       help_text="The template's expiry_during_lock.")
    valid_until = serializers.DateTimeField(allow_null=True)
    substitute_coupon_id = serializers.IntegerField(allow_null=True)
    holder_order_id = serializers.CharField(
        help_text="The other order holding or having used the coupon (LOCKED_BY_ANOTHER_ORDER).")


def example(name, outcome, message, discount="0.00", by="NONE", strategy="STRICT", **more):
    return OpenApiExample(name, response_only=True, value={
        "order_id": "PS-1", "outcome": outcome, "message": message, "discount_amount": discount,
        "discount_by": by, "coupon_id": 42, "strategy": strategy,
        "valid_until": "2026-11-10T16:00:00Z", "substitute_coupon_id": None,
        "holder_order_id": "", **more})


EXAMPLES = [
    example("OK", "OK", "The coupon applies: the final payment gets a discount of 50.00.",
            discount="50.00", by="COUPON"),
    example("Expired under STRICT", "EXPIRED", "The coupon expired before the final payment: "
            "the final payment is charged in full."),
    example("Expired under SUBSTITUTE", "EXPIRED", "The coupon expired before the final "
            "payment; another of your coupons gives the same discount of 50.00.",
            discount="50.00", by="SUBSTITUTE", strategy="SUBSTITUTE", substitute_coupon_id=57),
    example("Locked by another order", "LOCKED_BY_ANOTHER_ORDER", "The coupon chosen for this "
            "order is held by another order: the final payment is charged in full.",
            holder_order_id="PS-7"),
    example("Not locked", "NOT_LOCKED", "No coupon is held for this order: the final payment is "
            "charged in full.", coupon_id=None, strategy="", valid_until=None),
]


class FinalPaymentCheckApi(APIView):
    """Before charging a presale's final payment: will the order's coupon still apply, and for
    how much? A forecast read without locks; the final payment decides (docs/events.md)."""

    @extend_schema(responses=FinalPaymentCheckOutput, examples=EXAMPLES, parameters=[
        OpenApiParameter("order_id", id_schema(MAX_ORDER_ID), OpenApiParameter.PATH,
                         description="The order's id, as the order service sent it.")])
    def get(self, request, order_id):
        try:
            validate_id(order_id)
        except DjangoValidationError as error:
            raise ValidationFailed(_("Not an order id."), order_id=error.messages) from None
        if len(order_id) > MAX_ORDER_ID:
            raise ValidationFailed(_("Not an order id."), order_id=[_("At most 64 characters.")])
        check = final_payment_check(order_id=order_id, now=clock.now())
        coupon = check.coupon
        return Response({
            "order_id": check.order_id, "outcome": check.outcome, "message": check.message,
            "discount_amount": f"{check.discount_amount:.2f}", "discount_by": check.discount_by,
            "coupon_id": coupon.pk if coupon else None, "strategy": check.strategy,
            "valid_until": coupon.valid_until if coupon else None,
            "substitute_coupon_id": check.substitute.pk if check.substitute else None,
            "holder_order_id": check.holder_order_id,
        })
