// The incident story told by a TypeScript client generated from the live schema
// (openapi-typescript types, openapi-fetch calls): it must pass `tsc --strict --noEmit` with no
// cast, so every field it reads is one the schema declares. run.mjs generates ./schema.d.ts and
// ./env.ts beside it, type-checks, runs main() and validates every answer with ajv.
//
// Order A locks the coupon, its payment callback is late, the order-close job releases the
// coupon, order B locks it; A's late redeem is refused (its retry replayed), A's late
// PaymentSucceeded opens a conflict case, B's payment redeems it and B's OrderClosed, sent
// after it but older, is ignored; the check passes; B's refund returns the coupon (RETURN);
// an operator's compensation for A is decided by a second operator only (four eyes).

import createClient, { type Middleware } from "openapi-fetch";
import type { components, paths } from "./schema";
import { baseUrl, serviceKey, alice, bob, type Session } from "./env";

type Schemas = components["schemas"];

export type Answer = {
  method: string;
  schemaPath: string;
  status: number;
  contentType: string;
  body: unknown;
};

function check(condition: boolean, what: string): asserts condition {
  if (!condition) {
    throw new Error(`story: ${what}`);
  }
}

function minutesAgo(minutes: number): string {
  return new Date(Date.now() - minutes * 60_000).toISOString();
}

export async function main(): Promise<Answer[]> {
  const answers: Answer[] = [];
  const record: Middleware = {
    async onResponse({ request, response, schemaPath }) {
      const text = await response.clone().text();
      answers.push({
        method: request.method,
        schemaPath,
        status: response.status,
        contentType: response.headers.get("Content-Type") ?? "",
        body: text ? JSON.parse(text) : null,
      });
      return undefined;
    },
  };
  const machine = createClient<paths>({ baseUrl, headers: { Authorization: `Token ${serviceKey}` } });
  machine.use(record);
  const person = (session: Session) => {
    const client = createClient<paths>({
      baseUrl,
      headers: { Cookie: session.cookie, "X-CSRFToken": session.csrfToken },
    });
    client.use(record);
    return client;
  };
  const [asAlice, asBob] = [person(alice), person(bob)];

  const template = await machine.POST("/api/v1/templates", {
    params: { header: { "Idempotency-Key": "t-story" } },
    body: {
      code: "story-off30", name: "30 off 200", kind: "AMOUNT_OFF", face_value: "30.00",
      min_order_amount: "200.00", valid_days: 30,
    },
  });
  check(template.data !== undefined, "the template is created");
  const issued = await machine.POST("/api/v1/coupons", {
    params: { header: { "Idempotency-Key": "issue-story" } },
    body: { template_id: template.data.id, user_id: "u-story" },
  });
  check(issued.data !== undefined, "the coupon is issued");
  const coupon: Schemas["CouponOutput"] = issued.data;
  check(coupon.status === "AVAILABLE" && coupon.state_version === 1, "a new coupon is AVAILABLE v1");
  const couponPath = { coupon_id: coupon.id };

  const lock = async (order_id: string): Promise<Schemas["LockOutput"]> => {
    const { data } = await machine.POST("/api/v1/coupons/{coupon_id}/lock", {
      params: { path: couponPath, header: { "Idempotency-Key": `lock-${order_id}` } },
      body: { order_id, user_id: "u-story", order_amount: "300.00", lease_seconds: 900 },
    });
    check(data !== undefined, `order ${order_id} locks the coupon`);
    return data;
  };
  const redeem = (lease: Schemas["LockOutput"], payment_id: string, key: string) =>
    machine.POST("/api/v1/coupons/{coupon_id}/redeem", {
      params: { path: couponPath, header: { "Idempotency-Key": key } },
      body: {
        order_id: lease.order_id, lock_token: lease.lock_token,
        expected_version: lease.state_version, payment_id,
      },
    });

  // A locks; its payment callback is stuck; the order-close job releases; B locks.
  const leaseA = await lock("order-A");
  check(leaseA.discount_amount === "30.00", "the lock answers the discount");
  const released = await machine.POST("/api/v1/coupons/{coupon_id}/release", {
    params: { path: couponPath, header: { "Idempotency-Key": "close-A" } },
    body: {
      order_id: "order-A", lock_token: leaseA.lock_token,
      expected_version: leaseA.state_version, reason: "order closed",
    },
  });
  check(released.data?.status === "AVAILABLE" && released.data.state_version === 3,
    "the close releases the coupon (v3)");
  const leaseB = await lock("order-B");

  // A's late redeem is refused, and its retry is the stored refusal.
  const late = await redeem(leaseA, "pay-A", "pay-A-callback");
  const retry = await redeem(leaseA, "pay-A", "pay-A-callback");
  check(late.response.status === 409 && late.error !== undefined, "A's late redeem is a 409");
  const refusal: Schemas["ErrorDetail"] = late.error.error;
  check(refusal.code === "TOKEN_MISMATCH" || refusal.code === "VERSION_CONFLICT",
    `A's late redeem names the conflict (${refusal.code})`);
  check(retry.error?.error.code === refusal.code
    && retry.response.headers.get("Idempotent-Replayed") === "true", "the retry is replayed");
  const rejections = await machine.GET("/api/v1/coupons/{coupon_id}/rejections", {
    params: { path: couponPath },
  });
  check(rejections.data?.results.length === 1
    && rejections.data.results[0].op_type === "REDEEM", "the refusal is in the rejection log");

  // The same refusal as problem details, for a client that asks for them.
  const asProblem = await machine.POST("/api/v1/coupons/{coupon_id}/redeem", {
    params: { path: couponPath, header: { "Idempotency-Key": "pay-A-callback" } },
    body: {
      order_id: leaseA.order_id, lock_token: leaseA.lock_token,
      expected_version: leaseA.state_version, payment_id: "pay-A",
    },
    headers: { Accept: "application/problem+json" },
  });
  check(asProblem.response.headers.get("Content-Type") === "application/problem+json"
    && asProblem.error?.error.code === refusal.code, "problem details on request");

  // A's late payment, as a fact: a conflict case, typed by the outcome's action.
  const factA = await machine.POST("/api/v1/events", {
    body: {
      message_id: "pay-A-late", type: "PaymentSucceeded", occurred_at: minutesAgo(4),
      payload: { order_id: "order-A", payment_id: "pay-A" },
    },
  });
  check(factA.data !== undefined, "the late payment is received");
  const caseOutcome = factA.data.outcome;
  check(caseOutcome.action === "CASE_OPENED", `a case is opened (${caseOutcome.action})`);
  check(caseOutcome.coupon_id === coupon.id && caseOutcome.case_id > 0
    && caseOutcome.error_code === "TOKEN_MISMATCH", "the case names the coupon and the refusal");

  // Out of order: B's payment arrives, then B's order close that happened before it.
  const paidB = await machine.POST("/api/v1/events", {
    body: {
      message_id: "pay-B", type: "PaymentSucceeded", occurred_at: minutesAgo(1),
      payload: { order_id: "order-B", payment_id: "pay-B" },
    },
  });
  check(paidB.data?.outcome.action === "REDEEMED", "B's payment redeems the coupon");
  const closedB = await machine.POST("/api/v1/events", {
    body: {
      message_id: "close-B-old", type: "OrderClosed", occurred_at: minutesAgo(2),
      payload: { order_id: "order-B" },
    },
  });
  check(closedB.data !== undefined, "B's older close is received");
  const stale = closedB.data.outcome;
  check(stale.action === "IGNORED" || stale.action === "NOTHING_TO_RELEASE",
    `B's older close changes nothing (${stale.action})`);
  check(stale.coupon_id === coupon.id, "the ignored fact names the coupon");

  const used = await machine.GET("/api/v1/coupons/{coupon_id}", { params: { path: couponPath } });
  check(used.data?.status === "USED" && used.data.state_version === 5, "the coupon is USED v5");
  const checked = await machine.GET("/api/v1/coupons/{coupon_id}/check", {
    params: { path: couponPath },
  });
  check(checked.data?.ok === true, "the check replays the ledger and the invariants hold");

  // B's refund: the default policy returns the coupon.
  const refund = await machine.POST("/api/v1/refunds", {
    params: { header: { "Idempotency-Key": "refund-B" } },
    body: {
      refund_id: "r-B", order_id: "order-B", payment_id: "pay-B", refund_amount: "270.00",
      refund_type: "FULL",
    },
  });
  check(refund.response.status === 201 && refund.data !== undefined, "the refund is decided");
  const [decision] = refund.data.decisions;
  check(decision.status === "EXECUTED" && decision.coupon_decision?.action === "RETURN",
    "the refund returns the coupon");

  // Walk the ledger by cursor: every version once, RETURN last.
  const ledger: Schemas["OperationOutput"][] = [];
  let cursor: string | undefined = "";
  while (cursor !== undefined) {
    const page: Awaited<ReturnType<typeof ledgerPage>> = await ledgerPage(cursor);
    check(page.data !== undefined, "a ledger page");
    ledger.push(...page.data.results);
    const next: string | null = page.data.next;
    cursor = next === null ? undefined : new URL(next).searchParams.get("cursor") ?? undefined;
  }
  function ledgerPage(after: string) {
    return machine.GET("/api/v1/coupons/{coupon_id}/operations", {
      params: { path: couponPath, query: { cursor: after, page_size: 2 } },
    });
  }
  check(ledger.map((row) => row.op_type).join(",") === "ISSUE,LOCK,RELEASE,LOCK,REDEEM,RETURN",
    `the ledger (${ledger.map((row) => row.op_type).join(",")})`);
  const lockA = ledger[1];

  // Four eyes: Alice proposes paying A back, only Bob may approve it.
  const proposed = await asAlice.POST(
    "/api/v1/coupons/{coupon_id}/operations/{operation_id}/compensate", {
      params: {
        path: { coupon_id: coupon.id, operation_id: lockA.id },
        header: { "Idempotency-Key": "comp-A" },
      },
      body: { reason: "A paid with the discount its late redeem was refused", amount: "30.00" },
    });
  check(proposed.response.status === 201 && proposed.data !== undefined,
    `Alice proposes (${proposed.response.status})`);
  const compensation: Schemas["CompensationOutput"] = proposed.data;
  check(compensation.status === "PROPOSED" && compensation.kind === "MONEY", "a MONEY proposal");
  const decide = { path: { compensation_id: compensation.id } };
  // An approval names the version its operator read: the record's journal_tip.
  const shown = await asBob.GET("/api/v1/compensations/{compensation_id}", { params: decide });
  const seen_entry = shown.data?.journal_tip ?? "";
  const selfApproved = await asAlice.POST("/api/v1/compensations/{compensation_id}/approve", {
    params: { ...decide, header: { "Idempotency-Key": "comp-A-alice" } },
    body: { note: "fine by me", seen_entry },
  });
  check(selfApproved.response.status === 403 && selfApproved.error?.error.code === "SAME_OPERATOR",
    "the proposer may not approve");
  const approved = await asBob.POST("/api/v1/compensations/{compensation_id}/approve", {
    params: { ...decide, header: { "Idempotency-Key": "comp-A-bob" } },
    body: { note: "checked the payment", seen_entry },
  });
  check(approved.data?.status === "APPROVED"
    && approved.data.resulting_operation?.op_type === "COMPENSATE", "Bob approves: COMPENSATE");

  const timeline = await machine.GET("/api/v1/coupons/{coupon_id}/timeline", {
    params: { path: couponPath, query: { page_size: 200 } },
  });
  check((timeline.data?.results.length ?? 0) >= 7, "the timeline tells it all");
  return answers;
}
