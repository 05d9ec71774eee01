import { randomFillSync } from "node:crypto";

const UUID_BYTES = 16;
// 256 ids per call into the CSPRNG, as task-id.ts and the platform's randomUUID do.
const pool = Buffer.alloc(UUID_BYTES * 256);
let offset = pool.length;
const HEX = Buffer.from("0123456789abcdef", "latin1");
const text = Buffer.alloc(36);

/**
 * A random (version 4) UUID, as `crypto.randomUUID()` makes, written into one flat string. The
 * platform's joins 20 cached pieces, and until that code is optimized V8 keeps the result as a
 * chain of string pairs: about 0.5 KB of heap for as long as the id is held, against about 60
 * bytes flat. The ids a request keeps while it waits (its request id, its stream id) are held by
 * thousands of waiting requests at once.
 */
export function flatUuid(): string {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  let at = 0;
  for (let i = 0; i < UUID_BYTES; i++) {
    let byte = pool[offset + i]!;
    // RFC 9562 §5.4: the version (4) in the high nibble of byte 6, the variant (10) in the top bits of byte 8.
    if (i === 6) byte = (byte & 0x0f) | 0x40;
    else if (i === 8) byte = (byte & 0x3f) | 0x80;
    if (i === 4 || i === 6 || i === 8 || i === 10) text[at++] = 0x2d;
    text[at++] = HEX[byte >> 4]!;
    text[at++] = HEX[byte & 0x0f]!;
  }
  offset += UUID_BYTES;
  return text.toString("latin1", 0, at);
}
