// Request bodies the server refuses, which the generated types must refuse too: tsc fails on
// an `@ts-expect-error` that finds no error, so each line proves a type is as strict as the
// server. Not part of the story (its cast check does not read this file).
import type { components } from "./schema";

type Schemas = components["schemas"];
const order = { order_id: "o-1", user_id: "u-1", order_amount: "300.00" };

export const accepted: [Schemas["LockInputRequest"], Schemas["LockInputRequest"],
  Schemas["LockInputRequest"], Schemas["CaseResolveInputRequest"],
  Schemas["CaseResolveInputRequest"], Schemas["RefundInputRequest"]] = [
  order, { ...order, lease_seconds: 900 }, { ...order, lease_until: "2030-01-01T00:00:00Z" },
  { action: "APPLY" }, { action: "DISMISS", note: "paid twice" },
  { refund_id: "r-1", order_id: "o-1", payment_id: "p-1", refund_amount: "1.00",
    refund_type: "FULL" },
];

// @ts-expect-error: a lease's length or its end, never both
export const bothLeaseShapes: Schemas["LockInputRequest"] = { ...order, lease_seconds: 900, lease_until: "2030-01-01T00:00:00Z" };
// @ts-expect-error: a case resolution names its action
export const noAction: Schemas["CaseResolveInputRequest"] = {};
// @ts-expect-error: a note is text
export const numericNote: Schemas["CaseResolveInputRequest"] = { action: "APPLY", note: 42 };
// @ts-expect-error: only the actions the server knows
export const bogusAction: Schemas["CaseResolveInputRequest"] = { action: "BOGUS" };
// @ts-expect-error: an id is text
export const numericUser: Schemas["IssueInputRequest"] = { template_id: 1, user_id: 0 };
// @ts-expect-error: a flag is a boolean
export const numericFlag: Schemas["RefundInputRequest"] = { refund_id: "r-1", order_id: "o-1", payment_id: "p-1", refund_amount: "1.00", refund_type: "FULL", risk_flag: 0 };
