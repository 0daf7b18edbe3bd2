"""A customer in the directory, as the user service's fact would leave it."""

from coupons import clock
from coupons.phones import masked, normalised, phone_hash
from coupons.services.customers import customer_profile_apply


def customer(user_id: str, phone: str = "13812345678", nickname: str = "小王") -> None:
    number = normalised(phone)
    customer_profile_apply(user_id=user_id, phone_hash=phone_hash(number),
                           phone_masked=masked(number), nickname=nickname,
                           occurred_at=clock.now())
