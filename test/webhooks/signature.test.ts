/** Standard Webhooks signing, checked by the reference implementation (the standardwebhooks package). */
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { secretKey, signatureHeaders, verifySignature, WebhookSignatureError } from "../../src/runtime/webhooks/signature.js";
import { eventBody } from "../../src/runtime/webhooks/webhook-event.js";
import type { TaskRecord } from "../../src/core/task.js";

const secret = `whsec_${randomBytes(24).toString("base64")}`;

const task: TaskRecord = {
  id: "t1",
  owner: "local|alice",
  method: "tools/call",
  name: "build",
  request: {},
  origin: { sessionId: null, progressToken: null, accepts: [] },
  createdAt: Date.UTC(2026, 0, 1),
  ttlMs: 60_000,
  pollIntervalMs: 1000,
  retryable: false,
  status: "completed",
  statusMessage: null,
  updatedAt: Date.UTC(2026, 0, 1, 0, 0, 5),
  expiresAt: null,
  outcome: { kind: "result", value: { content: [{ type: "text", text: "done" }] } },
  progress: null,
};

describe("Standard Webhooks signature", () => {
  it("signs what the reference implementation verifies", () => {
    const body = eventBody(
      "task.completed",
      task,
      { status: "completed", statusMessage: null, at: task.updatedAt },
      { includeOwner: false },
    );
    const headers = signatureHeaders(secretKey(secret), "msg_1", Math.floor(Date.now() / 1000), body);
    const verified = new Webhook(secret).verify(body, headers);
    expect(verified).toMatchObject({ type: "task.completed", data: { taskId: "t1", status: "completed", tool: "build", ttl: 60_000 } });
  });

  it("verifies what the reference implementation signs, and refuses a changed body", () => {
    const body = '{"type":"task.failed"}';
    const now = new Date();
    const headers = {
      "webhook-id": "msg_2",
      "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
      "webhook-signature": new Webhook(secret).sign("msg_2", now, body),
    };
    expect(verifySignature(secret, headers, body)).toEqual({ type: "task.failed" });
    expect(() => verifySignature(secret, headers, '{"type":"task.completed"}')).toThrow(WebhookSignatureError);
    expect(() => verifySignature(secret, { ...headers, "webhook-timestamp": "1000" }, body)).toThrow(/too far/);
  });

  it("refuses a secret that is not whsec_<base64>, without showing it", () => {
    expect(() => secretKey("whsec_not base64!")).toThrow(/whsec_<base64>/);
    expect(() => secretKey("whsec_c2hvcnQ=")).toThrow(/too short/);
    try {
      secretKey("whsec_c2hvcnQ=");
    } catch (error) {
      expect(String(error)).not.toContain("c2hvcnQ");
    }
  });

  it("carries the result only when asked and under the limit, the owner only when asked", () => {
    const snapshot = { status: "completed" as const, statusMessage: "ok", at: task.updatedAt };
    expect(JSON.parse(eventBody("task.completed", task, snapshot, { includeOwner: false })).data).not.toHaveProperty("result");
    const small = JSON.parse(eventBody("task.completed", task, snapshot, { includeOwner: true, includeResultUpTo: 10_000 })).data;
    expect(small).toMatchObject({ result: { content: [{ text: "done" }] }, owner: "local|alice", statusMessage: "ok" });
    const big = JSON.parse(eventBody("task.completed", task, snapshot, { includeOwner: false, includeResultUpTo: 10 })).data;
    expect(big).toMatchObject({ resultOmitted: true });
    expect(big).not.toHaveProperty("result");
  });
});
