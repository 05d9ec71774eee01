import { createHmac, timingSafeEqual } from "node:crypto";
import { TaskError } from "./errors.js";

/** Keyset position in the (createdAt, id) order that `tasks/list` walks. */
export interface ListPosition {
  createdAt: number;
  id: string;
}

/**
 * Opaque, tamper-evident cursors (T-LIST-3, T-ERR-2): base64url(JSON position) + "." + HMAC.
 * The owner is part of the MAC, so a cursor issued to one principal is invalid for another.
 */
export class CursorCodec {
  constructor(private readonly secret: Buffer) {
    if (secret.length < 16) throw new Error("cursor secret must be at least 16 bytes");
  }

  encode(position: ListPosition, owner: string | null): string {
    const body = Buffer.from(JSON.stringify([position.createdAt, position.id])).toString("base64url");
    return `${body}.${this.mac(body, owner)}`;
  }

  /** @throws TaskError bad_cursor (-32602) for anything this codec did not issue to `owner`. */
  decode(cursor: unknown, owner: string | null): ListPosition {
    if (typeof cursor !== "string" || cursor.length > 512) throw TaskError.badCursor();
    const dot = cursor.indexOf(".");
    if (dot <= 0) throw TaskError.badCursor();
    const body = cursor.slice(0, dot);
    // Compare the MAC as text: decoding first would accept non-canonical base64url spellings
    // of it (the last character carries unused bits), i.e. an altered cursor.
    const given = Buffer.from(cursor.slice(dot + 1));
    const expected = Buffer.from(this.mac(body, owner));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw TaskError.badCursor();
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
    } catch {
      throw TaskError.badCursor();
    }
    if (!Array.isArray(parsed) || typeof parsed[0] !== "number" || typeof parsed[1] !== "string") {
      throw TaskError.badCursor();
    }
    return { createdAt: parsed[0], id: parsed[1] };
  }

  private mac(body: string, owner: string | null): string {
    return createHmac("sha256", this.secret)
      .update(owner === null ? "\u0000" : `o:${owner}`)
      .update("\u0001")
      .update(body)
      .digest("base64url");
  }
}
