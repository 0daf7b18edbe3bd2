// The incident story against a client openapi-generator's typescript-fetch made from the
// published schema with its default settings (`generate -g typescript-fetch`, no options):
// it must pass `tsc --strict --noEmit` with no cast, so every request it builds and every field
// it reads is one the schema declares as the server takes and answers it. The test generates
// ./client beside it (tests/contract/test_typescript_fetch_client.py).
//
// Order A locks the coupon, its payment callback is late, the order-close job releases the
// coupon, order B locks it; A's late redeem is refused (its retry replayed), A's late
// PaymentSucceeded opens a conflict case, B's payment redeems it; the check passes; B's refund
// returns the coupon (RETURN); the ledger is walked by cursor; an operator's compensation for A
// is decided by a second operator only (four eyes).

import {
  CompensationsApi,
  Configuration,
  CouponsApi,
  ErrorOutputFromJSON,
  EventsApi,
  RefundsApi,
  ResponseError,
  TemplatesApi,
  type ErrorOutput,
  type LockOutput,
  type OperationOutput,
} from "./client";

function check(condition: boolean, what: string): asserts condition {
  if (!condition) {
    throw new Error(`story: ${what}`);
  }
}

function minutesAgo(minutes: number): Date {
  return new Date(Date.now() - minutes * 60_000);
}

// A refusal's answer: the generated client throws ResponseError; its body is an ErrorOutput.
async function refusal(command: Promise<unknown>): Promise<[number, ErrorOutput]> {
  try {
    await command;
  } catch (failed) {
    if (failed instanceof ResponseError) {
      return [failed.response.status, ErrorOutputFromJSON(await failed.response.json())];
    }
    throw failed;
  }
  throw new Error("story: the command was not refused");
}

export async function main(baseUrl: string, serviceKey: string,
  alice: { cookie: string; csrfToken: string }, bob: { cookie: string; csrfToken: string }) {
  const machine = new Configuration({ basePath: baseUrl, apiKey: `Token ${serviceKey}` });
  const person = (session: { cookie: string; csrfToken: string }) => new Configuration({
    basePath: baseUrl, headers: { Cookie: session.cookie, "X-CSRFToken": session.csrfToken },
  });
  const coupons = new CouponsApi(machine);

  const template = await new TemplatesApi(machine).templatesCreate({
    idempotencyKey: "t-fetch-story",
    templateInputRequest: {
      code: "fetch-off30", name: "30 off 200", kind: "AMOUNT_OFF", faceValue: "30.00",
      minOrderAmount: "200.00", validDays: 30,
    },
  });
  const coupon = await coupons.couponsCreate({
    idempotencyKey: "issue-fetch-story",
    issueInputRequest: { templateId: template.id, userId: "u-fetch" },
  });
  check(coupon.status === "AVAILABLE" && coupon.stateVersion === 1, "a new coupon is AVAILABLE v1");
  const couponId = coupon.id;

  const lock = (orderId: string): Promise<LockOutput> => coupons.couponsLockCreate({
    couponId, idempotencyKey: `lock-${orderId}`,
    lockInputRequest: { orderId, userId: "u-fetch", orderAmount: "300.00", leaseSeconds: 900 },
  });
  const redeem = (lease: LockOutput, paymentId: string, key: string) =>
    coupons.couponsRedeemCreate({
      couponId, idempotencyKey: key,
      redeemInputRequest: {
        orderId: lease.orderId, lockToken: lease.lockToken,
        expectedVersion: lease.stateVersion, paymentId,
      },
    });

  // A locks; its payment callback is stuck; the order-close job releases; B locks.
  const leaseA = await lock("order-A");
  check(leaseA.discountAmount === "30.00", "the lock answers the discount");
  const released = await coupons.couponsReleaseCreate({
    couponId, idempotencyKey: "close-A",
    releaseInputRequest: {
      orderId: "order-A", lockToken: leaseA.lockToken, expectedVersion: leaseA.stateVersion,
      reason: "order closed",
    },
  });
  check(released.status === "AVAILABLE" && released.stateVersion === 3, "released (v3)");
  const leaseB = await lock("order-B");

  // A's late redeem is refused, and its retry (same key) is the stored refusal.
  const [status, late] = await refusal(redeem(leaseA, "pay-A", "pay-A-callback"));
  const [, retry] = await refusal(redeem(leaseA, "pay-A", "pay-A-callback"));
  check(status === 409, "A's late redeem is a 409");
  check(late.error.code === "TOKEN_MISMATCH" || late.error.code === "VERSION_CONFLICT",
    `A's late redeem names the conflict (${late.error.code})`);
  check(retry.error.code === late.error.code, "the retry is replayed");
  const rejections = await coupons.couponsRejectionsList({ couponId });
  check(rejections.results[0]?.opType === "REDEEM", "the refusal is in the rejection log");

  // A's late payment, as a fact: a conflict case, typed by the outcome's action.
  const events = new EventsApi(machine);
  const factA = await events.eventsCreate({
    eventRequest: {
      type: "PaymentSucceeded", messageId: "pay-A-late", occurredAt: minutesAgo(4),
      payload: { orderId: "order-A", paymentId: "pay-A" },
    },
  });
  const opened = factA.outcome;
  check(opened.action === "CASE_OPENED", `a case is opened (${opened.action})`);
  check(opened.couponId === couponId && opened.caseId > 0
    && opened.errorCode === "TOKEN_MISMATCH", "the case names the coupon and the refusal");

  const paidB = await events.eventsCreate({
    eventRequest: {
      type: "PaymentSucceeded", messageId: "pay-B", occurredAt: minutesAgo(1),
      payload: { orderId: "order-B", paymentId: "pay-B" },
    },
  });
  check(paidB.outcome.action === "REDEEMED", "B's payment redeems the coupon");
  check((await redeem(leaseB, "pay-B", "pay-B-callback")).status === "USED",
    "B's own redeem call is answered USED");
  const checked = await coupons.couponsCheckRetrieve({ couponId });
  check(checked.ok && checked.replayedState === "USED", "the check replays the ledger");

  // B's refund: the default policy returns the coupon.
  const refund = await new RefundsApi(machine).refundsCreate({
    idempotencyKey: "refund-B",
    refundInputRequest: {
      refundId: "r-B", orderId: "order-B", paymentId: "pay-B", refundAmount: "270.00",
      refundType: "FULL",
    },
  });
  const [decision] = refund.decisions;
  check(decision !== undefined && decision.status === "EXECUTED"
    && decision.couponDecision.action === "RETURN", "the refund returns the coupon");

  // Walk the ledger by cursor: every version once, RETURN last.
  const ledger: OperationOutput[] = [];
  let cursor: string | undefined = "";
  while (cursor !== undefined) {
    const page = await coupons.couponsOperationsList({ couponId, cursor, pageSize: 2 });
    ledger.push(...page.results);
    cursor = page.next === null
      ? undefined : new URL(page.next).searchParams.get("cursor") ?? undefined;
  }
  const kinds = ledger.map((row) => row.opType).join(",");
  check(kinds === "ISSUE,LOCK,RELEASE,LOCK,REDEEM,RETURN", `the ledger (${kinds})`);
  const lockA = ledger[1];
  check(lockA !== undefined, "A's lock is in the ledger");

  // Four eyes: Alice proposes paying A back, only Bob may approve it.
  const proposal = await new CouponsApi(person(alice)).compensationPropose({
    couponId, operationId: lockA.id, idempotencyKey: "comp-A",
    compensationProposeInputRequest: {
      reason: "A paid with the discount its late redeem was refused", amount: "30.00",
    },
  });
  check(proposal.status === "PROPOSED" && proposal.kind === "MONEY", "a MONEY proposal");
  const [asAlice, asBob] = [new CompensationsApi(person(alice)), new CompensationsApi(person(bob))];
  const shown = await asBob.compensationsRetrieve({ compensationId: proposal.id });
  const seenEntry = shown.journalTip ?? "";
  const [selfStatus, self] = await refusal(asAlice.compensationApprove({
    compensationId: proposal.id, idempotencyKey: "comp-A-alice",
    compensationDecideInputRequest: { note: "fine by me", seenEntry },
  }));
  check(selfStatus === 403 && self.error.code === "SAME_OPERATOR", "the proposer may not approve");
  const approved = await asBob.compensationApprove({
    compensationId: proposal.id, idempotencyKey: "comp-A-bob",
    compensationDecideInputRequest: { note: "checked the payment", seenEntry },
  });
  check(approved.status === "APPROVED"
    && approved.resultingOperation?.opType === "COMPENSATE", "Bob approves: COMPENSATE");

  const timeline = await coupons.couponsTimelineList({ couponId, pageSize: 200 });
  check(timeline.results.length >= 7, "the timeline tells it all");
  return ledger.length;
}
