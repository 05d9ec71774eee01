import type { ServerResponse } from "node:http";

/**
 * Makes the head Node keeps for a response (`_header`, what `headersSent` reads and the first
 * write sends) one flat string. Node builds it by joining the status line and each header, and
 * V8 keeps such a join as a chain of string pairs, one per piece: about 1 KB of heap for an SSE
 * head, for as long as the response is open. Called for the responses that stay open while they
 * wait (event streams), after their head is written; a short answer lets its head go at once.
 * Header bytes are Latin-1 (Node refuses anything else in a head), so the copy is exact.
 */
export function flattenHead(res: ServerResponse): void {
  const kept = res as unknown as { _header?: unknown };
  if (typeof kept._header === "string") kept._header = Buffer.from(kept._header, "latin1").toString("latin1");
}
