/** Reading Server-Sent Events in tests: the `data` of each event, as the SSE format defines it. */

/** The data of one event (its `data:` lines joined with "\n"); "" when it has none (a comment, a priming event). */
export function eventData(event: string): string {
  return event
    .split("\n")
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(5).replace(/^ /, ""))
    .join("\n");
}

/**
 * Splits an SSE body chunk by chunk into the data of its complete events. Synchronous on purpose:
 * a recorder reading a tee of the body must see each event as soon as the chunk that ends it
 * arrives, not some microtasks after the client it records has handled it.
 */
export class SseSplitter {
  private readonly decoder = new TextDecoder();
  private buffer = "";

  /** The data of the events this chunk completes, in order; events without data are skipped. */
  push(chunk: Uint8Array): string[] {
    this.buffer += this.decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, "\n");
    const complete: string[] = [];
    let end: number;
    while ((end = this.buffer.indexOf("\n\n")) >= 0) {
      const data = eventData(this.buffer.slice(0, end));
      this.buffer = this.buffer.slice(end + 2);
      if (data) complete.push(data);
    }
    return complete;
  }
}
