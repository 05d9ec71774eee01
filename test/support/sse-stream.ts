/** An SSE response read event by event, with each event's id and retry (resumption tests). */

export interface SseEvent {
  id: string | undefined;
  retry: number | undefined;
  /** The `data:` lines joined with "\n" ("" for a priming event). */
  data: string;
}

export interface SseStream {
  response: Response;
  /** Every event received so far, in order. */
  readonly events: SseEvent[];
  /** The next event matching `predicate` (already received or still to come); rejects after `timeoutMs` or at the end. */
  next(predicate?: (event: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  /** Resolves when the server has ended the stream. */
  readonly ended: Promise<void>;
  /** Drops the connection (as a client whose network failed would). */
  drop(): void;
}

/** Sends the request and reads its SSE answer as it arrives. */
export async function openSse(url: string | URL, init: RequestInit): Promise<SseStream> {
  const abort = new AbortController();
  const response = await fetch(url, { ...init, signal: abort.signal });
  const events: SseEvent[] = [];
  const waiters = new Set<() => void>();
  let finished = false;
  const wake = (): void => waiters.forEach((w) => w());
  const ended = (async () => {
    if (!response.body) return;
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, "\n");
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const event = parseEvent(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
          if (event) {
            events.push(event);
            wake();
          }
        }
      }
    } catch {
      // dropped
    } finally {
      finished = true;
      wake();
    }
  })();
  let seen = 0;
  return {
    response,
    events,
    ended,
    drop: () => abort.abort(),
    next(predicate = () => true, timeoutMs = 10_000) {
      return new Promise<SseEvent>((resolve, reject) => {
        const check = (): void => {
          for (; seen < events.length; seen++) {
            const event = events[seen];
            if (event && predicate(event)) {
              seen++;
              done();
              resolve(event);
              return;
            }
          }
          if (finished) {
            done();
            reject(new Error("the SSE stream ended before the expected event"));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`no matching SSE event within ${timeoutMs} ms`));
        }, timeoutMs);
        const done = (): void => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
  };
}

function parseEvent(block: string): SseEvent | null {
  let id: string | undefined;
  let retry: number | undefined;
  const data: string[] = [];
  let fields = 0;
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const name = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    fields++;
    if (name === "id") id = value;
    else if (name === "retry") retry = Number(value);
    else if (name === "data") data.push(value);
  }
  return fields === 0 ? null : { id, retry, data: data.join("\n") };
}

/** The JSON-RPC message an event carries, or undefined (priming event, not JSON). */
export function messageOf(event: SseEvent): Record<string, unknown> | undefined {
  if (event.data === "") return undefined;
  try {
    return JSON.parse(event.data) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
