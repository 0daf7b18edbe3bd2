"""Domain errors with stable codes (docs/api.md). api.exceptions turns them into answers.

Codes stay English and never translated: callers, logs and tickets quote them. Messages are
lazy, so each answer is worded in the language of the request that reads it, while the
rejection log stores the English one (coupons.write.refusals).
"""

from django.utils.translation import gettext_lazy as _

from common.errors import error_body


def storable(value):
    """`value` with every NUL written as U+FFFD, in keys and strings at any depth.

    A refusal's details echo what was sent (an unknown key, a refund id) and are stored with
    its Idempotency-Key and in the rejection log; PostgreSQL stores no NUL in text or jsonb,
    so a NUL sent would turn a 400 into a 500.
    """
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, dict):
        return {storable(key): storable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [storable(item) for item in value]
    return value


class CouponError(Exception):
    code = "ERROR"
    http_status = 400
    message = _("The request was refused.")

    def __init__(self, message: str | None = None, **details):
        self.message = message or self.message
        self.details = storable(details)
        super().__init__(self.message)

    def as_body(self) -> dict:
        return error_body(self.code, self.message, self.details)


class ValidationFailed(CouponError):
    code = "VALIDATION_ERROR"
    message = _("The request is not valid.")


class IdempotencyKeyMissing(CouponError):
    code = "IDEMPOTENCY_KEY_MISSING"
    message = _("Every command needs an Idempotency-Key header.")


class CapabilityMissing(CouponError):
    """A 403 that names what the caller lacks in `details.capability` (docs/api.md)."""

    code = "PERMISSION_DENIED"
    http_status = 403
    message = _("You are not allowed to do this.")


class LeaseOfAnotherClient(CouponError):
    """A 403: the coupon's lease answers only to the service client that took it (docs/api.md).

    Checked before the token, so a client learns nothing about another client's lease; a
    lease taken by no client (a console user, the coordinator) answers to no client either.
    """

    code = "PERMISSION_DENIED"
    http_status = 403
    message = _("This coupon's lease was taken by another client.")

    def __init__(self, message: str | None = None, **details):
        super().__init__(message, reason="LEASE_OF_ANOTHER_CLIENT", **details)


class NotFound(CouponError):
    code = "NOT_FOUND"
    http_status = 404
    message = _("No such object.")


class StateConflict(CouponError):
    """A 409: details always carry the coupon's current_state and current_version."""

    http_status = 409

    def __init__(self, message: str | None = None, *, coupon=None, **details):
        if coupon is not None:
            details = {
                "current_state": coupon.status,
                "current_version": coupon.state_version,
                **details,
            }
        super().__init__(message, **details)


class InvalidState(StateConflict):
    code = "INVALID_STATE"
    message = _("The coupon is not in a state that allows this command.")


class OrderMismatch(StateConflict):
    code = "ORDER_MISMATCH"
    message = _("The coupon's lease belongs to another order.")


class TokenMismatch(StateConflict):
    code = "TOKEN_MISMATCH"
    message = _("The lease token does not prove the coupon's current lease.")


class VersionConflict(StateConflict):
    code = "VERSION_CONFLICT"
    message = _("The coupon changed since the expected version.")


class AlreadyExists(CouponError):
    """A 409: the unique name is taken; details name the existing object and its version."""

    code = "ALREADY_EXISTS"
    http_status = 409
    message = _("An object with this identifier already exists.")


class TermsConflict(CouponError):
    """A 409: an edit that is valid on its own leaves, with the terms the template keeps, terms
    that could not price an order; details name each field at fault and the stored version."""

    code = "TERMS_CONFLICT"
    http_status = 409
    message = _("With the terms the template keeps, this edit would not price an order.")


class IdempotencyRequestInProgress(CouponError):
    code = "IDEMPOTENCY_REQUEST_IN_PROGRESS"
    http_status = 409
    message = _("A request with this Idempotency-Key is still being processed; retry later.")


class IdempotencyRecordInvalid(CouponError):
    """The record stored under this Idempotency-Key does not carry the server's seal over its
    scope, key, request and answer: written or changed past the server. Never replayed."""

    code = "IDEMPOTENCY_RECORD_INVALID"
    http_status = 409
    message = _("The stored answer of this Idempotency-Key cannot be verified, so it is not "
                "replayed; send the request with a new key.")


class CouponBusy(CouponError):
    """Another transaction held the coupon's row past COMMAND_LOCK_TIMEOUT_MS. Nothing was done
    and the Idempotency-Key stays free: retry after `retry_after` seconds with the same key."""

    code = "COUPON_BUSY"
    http_status = 409
    message = _("Another command on this coupon is still running; retry shortly.")
    # Set by refusals_recorded when the refusal could not be written in the command's aborted
    # transaction: the owner of the transaction writes it once it rolled back.
    rejection = None


class ReplayInProgress(CouponError):
    """A 429: this person's impact replay is still running; one at a time."""

    code = "REPLAY_IN_PROGRESS"
    http_status = 429
    message = _("Your previous impact replay is still running; wait for it, then retry.")


class BusinessRuleError(CouponError):
    http_status = 422


class CouponExpired(BusinessRuleError):
    code = "COUPON_EXPIRED"
    message = _("The coupon is past its validity window.")


class CouponNotYetValid(BusinessRuleError):
    code = "COUPON_NOT_YET_VALID"
    message = _("The coupon's validity window has not started.")


class ThresholdNotMet(BusinessRuleError):
    code = "THRESHOLD_NOT_MET"
    message = _("The order amount is below the coupon's minimum.")


class NotCouponOwner(BusinessRuleError):
    code = "NOT_COUPON_OWNER"
    message = _("The coupon belongs to another user.")


class IdempotencyKeyReused(BusinessRuleError):
    code = "IDEMPOTENCY_KEY_REUSED"
    message = _("This Idempotency-Key was used for a different request.")


class MessageIdReused(BusinessRuleError):
    code = "MESSAGE_ID_REUSED"
    message = _("This sender already sent another fact under this message_id.")


class RefundIdReused(BusinessRuleError):
    """A refund id received before for another order or amount: like a reused key, a 422.

    Not a 400: the request is well formed, and only what was received before refuses it.
    """

    code = "REFUND_ID_REUSED"
    message = _("This refund id was received for another order or amount.")


class RecordNotOpen(CouponError):
    """A 409 about a record with a status but no version (a case, a refund decision, a
    compensation): details carry its status as current_state."""

    code = "INVALID_STATE"
    http_status = 409


class DecisionNotPending(RecordNotOpen):
    message = _("The refund decision is not waiting for this.")


class CaseNotOpen(RecordNotOpen):
    message = _("The conflict case is no longer open.")


class FindingNotOpen(RecordNotOpen):
    message = _("The reconciliation finding is no longer open.")


class BrokerUnavailable(CouponError):
    """Re-driving an event needs the broker; the event stays unpublished for the relay."""

    code = "SERVICE_UNAVAILABLE"
    http_status = 503
    message = _("The message broker did not confirm the event; it stays queued for the relay.")


class PolicyVersionConflict(CouponError):
    """A 409 about a return policy version: current_state is its status, current_version its
    number (a policy version has no state_version of its own)."""

    code = "INVALID_STATE"
    http_status = 409

    def __init__(self, message: str | None = None, *, version=None, **details):
        if version is not None:
            details = {"current_state": version.status, "current_version": version.number,
                       "policy": version.policy.code, **details}
        super().__init__(message, **details)


class PolicyVersionFrozen(PolicyVersionConflict):
    message = _("A published policy version never changes; make a new draft from it.")


class PolicyDraftExists(PolicyVersionConflict):
    message = _("This policy already has a draft; edit or publish that one.")


class PolicyDraftUnchanged(PolicyVersionConflict):
    """A draft whose rules are the published ones would make a new version that changes
    nothing, and every later decision would name it as if it had."""

    message = _("This draft's rules are the same as the published version's: change a rule "
                "before publishing. Nothing was published.")


class SameOperator(CouponError):
    """Four eyes: whoever proposed a compensation may not decide it."""

    code = "SAME_OPERATOR"
    http_status = 403
    message = _("A compensation is approved or rejected by someone other than its proposer.")


class CompensationNotOpen(RecordNotOpen):
    message = _("The compensation has already been decided.")


class CompensationPending(CouponError):
    code = "COMPENSATION_PENDING"
    http_status = 409
    message = _("A compensation for this operation is already waiting for a decision.")


class GoodwillSameOperator(SameOperator):
    message = _("A goodwill coupon is approved or rejected by someone other than its proposer.")


class GoodwillNotOpen(RecordNotOpen):
    message = _("The goodwill coupon has already been decided.")


class GoodwillAlreadyGiven(CouponError):
    """One goodwill coupon per customer and case: `details` name the proposal that holds it
    (waiting for a decision, or approved)."""

    code = "GOODWILL_ALREADY_GIVEN"
    http_status = 409
    message = _("This customer already has a goodwill coupon for this order or case.")


class TemplateInactive(BusinessRuleError):
    code = "TEMPLATE_INACTIVE"
    message = _("The template's campaign is closed: it issues no more coupons.")


class OperationNotReversible(BusinessRuleError):
    code = "OPERATION_NOT_REVERSIBLE"
    message = _("This kind of operation cannot be reversed.")


class EvidenceMismatch(CouponError):
    """The row a decision is about differs from what its journal says was written (someone
    changed it outside the services): nothing is decided on it. Details name the row, the
    first column that differs and both values."""

    code = "EVIDENCE_MISMATCH"
    http_status = 409
    message = _("The record differs from its journal; it was changed outside the service and "
                "cannot be decided.")


class EvidenceChanged(CouponError):
    """The decision names the version of the row its decider saw (the hash of its newest
    journal entry) and the row has moved on since: decided by someone else, or changed, past
    the services or through them. Details name the row, the entry seen and the newest one."""

    code = "EVIDENCE_CHANGED"
    http_status = 409
    message = _("This record changed after you opened it. Nothing was decided: look at it "
                "again and decide on what it says now.")
