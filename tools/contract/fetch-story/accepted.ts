// Request bodies the server takes, which the generated models must take too: a field the
// server fills in or a constraint's branch leaves out is optional (tsc fails otherwise).
import type {
  CaseResolveInputRequest,
  FindingResolveInputRequest,
  LockInputRequest,
  RenewInputRequest,
  TemplateInputRequest,
} from "./client";

const order = { orderId: "o-1", userId: "u-1", orderAmount: "300.00" };
const lease = { orderId: "o-1", lockToken: "t", expectedVersion: 2 };

export const locks: LockInputRequest[] = [
  order, { ...order, leaseSeconds: 900 }, { ...order, leaseUntil: new Date("2030-01-01") },
];
export const renewals: RenewInputRequest[] = [lease, { ...lease, leaseSeconds: 900 }];
export const resolutions: CaseResolveInputRequest[] = [
  { action: "APPLY" }, { action: "DISMISS", note: "paid twice" },
];
export const findings: FindingResolveInputRequest[] = [{ action: "APPLY" }];
export const templates: TemplateInputRequest[] = [
  { code: "off5", name: "5 off", kind: "AMOUNT_OFF", faceValue: "5.00", validDays: 30 },
  { code: "pct", name: "10%", kind: "PERCENT_OFF", percentOff: "10", validUntil: new Date() },
];
