/** Raw HTTP access to the web view's API, as a page would make it, for access and bad-input tests. */
import { Recorder } from "./recorder.js";

export interface ApiAnswer {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed as JSON (loosely typed: tests inspect fields). */
  json: Record<string, unknown> & { error?: { message: string } };
}

export async function webApi(base: URL, path: string, token?: string, init: RequestInit = {}): Promise<ApiAnswer> {
  const response = await fetch(new URL(path, base), {
    ...init,
    headers: { ...(token !== undefined && { authorization: `Bearer ${token}` }) },
  });
  const text = await response.text();
  let json: ApiAnswer["json"] = {};
  try {
    json = JSON.parse(text) as ApiAnswer["json"];
  } catch {
    // not JSON (e.g. the HTML page)
  }
  return { status: response.status, headers: response.headers, text, json };
}

export interface StreamEvent {
  event: string;
  data: Record<string, unknown>;
}

/** An open `/tasks/api/events` stream: every event received, its raw text, and a way to stop. */
export interface EventStreamReader {
  events: Recorder<StreamEvent>;
  raw(): string;
  close(): void;
}

/** Opens the event stream with `token` and records its events until closed. Resolves once `ready` arrived. */
export function openEventStream(base: URL, token: string): Promise<EventStreamReader> {
  return openEventStreamAt(base, "/tasks/api/events", token);
}

/** {@link openEventStream} at a path of one's own (with a query). */
export async function openEventStreamAt(base: URL, path: string, token: string): Promise<EventStreamReader> {
  const controller = new AbortController();
  const response = await fetch(new URL(path, base), { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
  if (response.status !== 200 || !response.body) throw new Error(`event stream answered ${response.status}`);
  const events = new Recorder<StreamEvent>();
  let raw = "";
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        const text = decoder.decode(chunk, { stream: true });
        raw += text;
        buffer += text;
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data) events.push({ event, data: JSON.parse(data) as Record<string, unknown> });
        }
      }
    } catch {
      // closed by the test
    }
  })();
  await events.waitFor((e) => e.event === "ready", "the event stream to be ready");
  return { events, raw: () => raw, close: () => controller.abort() };
}
