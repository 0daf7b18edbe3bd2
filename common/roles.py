"""The login the server uses: it may read and append, never switch off what guards history."""

APP_ROLE = "coupon_app"
