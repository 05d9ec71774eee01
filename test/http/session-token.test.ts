/**
 * Shared-session ids: signed claims any node verifies. Verified ids are remembered for speed;
 * that must never let an altered or foreign id through.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { SessionTokenCodec } from "../../src/http/shared-sessions/session-token.js";

const claims = { principal: "local|alice", capabilities: { elicitation: { form: {} } }, protocolVersion: "2025-11-25" };

describe("shared session ids", () => {
  it("reads back the claims they were issued with, on any node sharing the secret", () => {
    const secret = randomBytes(32);
    const id = new SessionTokenCodec(secret).issue(claims);
    expect(new SessionTokenCodec(secret).read(id)).toEqual(claims);
  });

  it("refuses an id with any character changed, though the genuine one was read (and remembered) just before", () => {
    const codec = new SessionTokenCodec(randomBytes(32));
    const id = codec.issue(claims);
    expect(codec.read(id)).toEqual(claims);
    for (const at of [3, id.indexOf(".", 3) + 1, id.length - 1]) {
      const altered = id.slice(0, at) + (id[at] === "A" ? "B" : "A") + id.slice(at + 1);
      expect(codec.read(altered)).toBeNull();
    }
    expect(codec.read(id)).toEqual(claims);
  });

  it("refuses an id issued under another secret (another deployment)", () => {
    const id = new SessionTokenCodec(randomBytes(32)).issue(claims);
    expect(new SessionTokenCodec(randomBytes(32)).read(id)).toBeNull();
  });

  it("keeps verifying ids correctly beyond the number it remembers", () => {
    const codec = new SessionTokenCodec(randomBytes(32), 2);
    const ids = Array.from({ length: 5 }, (_, i) => codec.issue({ ...claims, principal: `p${i}` }));
    for (let round = 0; round < 2; round++) {
      ids.forEach((id, i) => expect(codec.read(id)?.principal).toBe(`p${i}`));
    }
  });
});
