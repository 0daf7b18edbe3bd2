from django.db import models


class CustomerProfile(models.Model):
    """What the user service last told us about a customer (CustomerProfileUpdated): the row
    is derived, rewritten by each newer fact; the facts themselves are the inbox's messages.

    Nothing else about the customer is kept, and never the phone number itself: its keyed
    hash finds the customer, its masked form is shown (coupons/phones.py).
    """

    user_id = models.CharField(max_length=64, unique=True)
    phone_hash = models.CharField(max_length=64, blank=True, db_index=True,
                                  help_text="HMAC-SHA256 of the E.164 number; empty: none given.")
    phone_masked = models.CharField(max_length=32, blank=True,
                                    help_text="What a page shows, e.g. 138****5678.")
    nickname = models.CharField(max_length=64, blank=True)
    occurred_at = models.DateTimeField(help_text="When the user service changed the profile, "
                                                 "by the newest fact applied.")
    updated_at = models.DateTimeField()

    # The search box finds a customer by any part of a nickname or user id
    # (`UPPER(column) LIKE '%TYPED%'`, timeline/search.py): trigram indexes answer it, made by
    # migration 0042 as 0027_trigram_search_indexes made the coupons' ids'.

    def __str__(self):
        return f"customer {self.user_id}"
