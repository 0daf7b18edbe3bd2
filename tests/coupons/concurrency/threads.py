"""Releasing calls at the same moment from real threads, each on its own connection."""

import threading

from django.db import connection

from coupons.errors import CouponError

JOIN_TIMEOUT = 120


def race(*calls):
    """Run each call in its own thread, all released at once; answers [(kind, value)] in order.

    kind is "ok" (the call's return value) or "refused" (a CouponError's code). Any other
    exception (a deadlock, a unique violation, a 500) or a hung thread fails the test. Every
    thread closes its own database connection.
    """
    barrier = threading.Barrier(len(calls))
    outcomes = [None] * len(calls)

    def run(index, call):
        try:
            barrier.wait(timeout=JOIN_TIMEOUT)
            outcomes[index] = ("ok", call())
        except CouponError as error:
            outcomes[index] = ("refused", error.code)
        except Exception as error:  # noqa: BLE001 - reported, and fails the test below
            outcomes[index] = ("crashed", repr(error))
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(JOIN_TIMEOUT)
    assert not any(thread.is_alive() for thread in threads), "a racing thread hung"
    crashed = [value for kind, value in outcomes if kind == "crashed"]
    assert not crashed, f"racing calls crashed: {crashed}"
    return outcomes


def all_ok(outcomes) -> list:
    """The return values of calls that must all have succeeded."""
    assert all(kind == "ok" for kind, _ in outcomes), outcomes
    return [value for _, value in outcomes]
