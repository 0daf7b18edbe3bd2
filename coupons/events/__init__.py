"""Facts from the order, payment and refund services, and the coordinator that follows them."""
