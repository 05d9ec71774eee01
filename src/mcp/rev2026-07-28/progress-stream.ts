import type { MessageStream } from "../era.js";
import { wireErrorIn } from "../own-error-wire.js";
import { OWN_ERROR_CODES_2026 } from "../wire/rev2026-07-28/own-error-codes.js";
import { RESULT_TYPE } from "../wire/rev2026-07-28/wire.js";

/** What a plain call's handler reports (ctx.progress). */
export type ProgressSink = (progress: number, total?: number, message?: string) => void;

/**
 * A `tools/call` that asked for progress (a `progressToken` in `_meta`): answered as before — one
 * JSON response, same HTTP status — when it settles before reporting any progress; switched to an
 * SSE stream at its first `notifications/progress` (the Streamable HTTP answer to a POST may be
 * one), which carries the progress as it comes and ends with the call's response. So a call
 * without progress, or a refusal (-32602, -32021…), reads exactly as without a token.
 */
export async function withProgressStream(
  id: string | number,
  token: string | number,
  signal: AbortSignal,
  run: (progress: ProgressSink) => Promise<Record<string, unknown>>,
): Promise<{ result: Record<string, unknown> } | { stream: MessageStream }> {
  // Held until the stream is written (between the switch and the endpoint's start), then sent as they come.
  const queue: Array<Record<string, unknown>> = [];
  let sendTo: ((message: Record<string, unknown>) => void) | null = null;
  let ended: (() => void) | null = null;
  let streaming = false;
  let switched: (() => void) | null = null;
  const switchedToStream = new Promise<"stream">((resolve) => (switched = () => resolve("stream")));
  const push = (message: Record<string, unknown>): void => {
    if (sendTo) sendTo(message);
    else queue.push(message);
  };
  const sink: ProgressSink = (progress, total, message) => {
    if (signal.aborted) return;
    push({
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: { progressToken: token, progress, ...(total !== undefined && { total }), ...(message !== undefined && { message }) },
    });
    if (!streaming) {
      streaming = true;
      switched?.();
    }
  };
  let done = false;
  const call = run(sink).then(
    (result) => ({ result: typeof result["resultType"] === "string" ? result : { ...result, resultType: RESULT_TYPE.complete } }),
    (error: unknown) => ({ error }),
  );
  void call.then((settled) => {
    if (!streaming) return;
    push(
      "result" in settled
        ? { jsonrpc: "2.0", id, result: settled.result }
        : { jsonrpc: "2.0", id, error: wireErrorIn(OWN_ERROR_CODES_2026, settled.error) },
    );
    done = true;
    ended?.();
  });
  const first = await Promise.race([call, switchedToStream]);
  if (first !== "stream") {
    if ("error" in first) throw first.error;
    return first;
  }
  const stream: MessageStream = (send) => {
    for (const message of queue.splice(0)) send(message);
    if (done || signal.aborted) return Promise.resolve();
    sendTo = send;
    return new Promise<void>((resolve) => {
      const stop = (): void => {
        signal.removeEventListener("abort", stop);
        resolve();
      };
      ended = stop;
      signal.addEventListener("abort", stop);
    });
  };
  return { stream };
}
