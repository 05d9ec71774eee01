import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { inClientSpan, traceMetaParams } from "../mcp/tracing/client-span.js";
import { RpcCode, TaskError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { ownErrorOf } from "../mcp/own-error-codes.js";
import { isTerminalTaskStatus, type RemoteTaskHandle, type TaskOutcome } from "../mcp/requestor/remote-task-info.js";
import { ConnectionError } from "../mcp/requestor/requestor-errors.js";
import type { ToolContext } from "../mcp/tool-definition.js";
import { SESSION_REQUESTOR } from "../mcp/requestor/requestor-eras.js";
import { pause } from "../core/pause.js";

/** The requestor the gateway follows its upstream's tasks with (a session era, as the SDK client opens one). */
const UPSTREAM = SESSION_REQUESTOR.upstream;

/**
 * Whether the upstream runs `tool` as a task of its own (2025-11-25): it declares
 * `capabilities.tasks.requests.tools.call` and the tool an `execution.taskSupport` other than
 * "forbidden". The gateway then calls it task-augmented and follows the upstream task.
 */
export function upstreamRunsAsTask(client: Client, tool: Pick<Tool, "execution">): boolean {
  return UPSTREAM.runsAsTask(client, tool.execution?.taskSupport);
}

/** What following an upstream task needs of the connection (kept apart to avoid an import cycle). */
export interface UpstreamTaskHost {
  readonly name: string;
  client(waitMs?: number): Promise<Client>;
  /** Counts `ctx` as a call in flight (questions without a related task may go to it); returns the undo. */
  attach(ctx: ToolContext): () => void;
  /**
   * Routes the upstream's questions that name this upstream task to `ctx`; returns the undo, or
   * null when the upstream gave the task to another call of the gateway (it is never re-bound).
   */
  bindTask(upstreamTaskId: string, ctx: ToolContext): (() => void) | null;
  /** `error` says the upstream forgot `client`'s session: what it carried never ran there, and a new session is on its way. */
  sessionLost(client: Client, error: unknown): boolean;
}

/** One tool call the gateway makes as an upstream task. */
interface UpstreamCall {
  name: string;
  args: Record<string, unknown>;
  ctx: ToolContext;
  timeoutMs: number;
  ttl?: number | undefined;
}

/** The upstream task a gateway task follows: stored as the gateway task's checkpoint (`ctx.step`). */
interface UpstreamTaskRef {
  taskId: string;
}

/**
 * Bounds on the upstream's pollInterval: often enough to pass its statusMessage on and notice a
 * hang within `--upstream-timeout`, never a busy loop.
 */
const POLL_BOUNDS_MS = { min: 100, max: 5000 };
/** Times a follow that lost its upstream connection re-attaches before the task fails. */
const MAX_REATTACH = 3;
/**
 * Refusals that say "later", not "no": the upstream's rate limit or failed-lookup cool-down
 * and its drain or a busy store, in either era's code (mcp/own-error-codes.ts: -32029/-31429,
 * -32003/-31503). A gateway re-attaching to many tasks at once can trip an upstream's
 * failed-lookup guard, which then refuses even the lookups of tasks it knows; failing those
 * tasks would lose work the upstream still holds.
 */
const retryLater = (code: number): boolean => {
  const own = ownErrorOf(code);
  return own === "rateLimited" || own === "unavailable";
};
/** Refusals in a row a follow waits out (each for its `retryAfterMs`, at most a minute) before the task fails. */
const MAX_REFUSALS = 10;
const MAX_REFUSAL_WAIT_MS = 60_000;

/**
 * Runs a tool call as a task of the upstream and follows it to its end with the requestor's own
 * task handle (the era's `task`, the one TaskClient follows its tasks with): it polls at the
 * upstream's `pollInterval` (clamped 100 ms…5 s, each look bounded by `timeoutMs`) and, from
 * `input_required` or the end on, waits for the result — whose stream carries the upstream task's
 * questions, routed to this call by their related-task id. What stays here is the gateway's
 * policy around that handle: the statusMessage passed on as "Upstream: …", a lost connection
 * re-attached (up to 3 times), refusals that say "later" waited out, failures worded for the
 * requestor, and an abort of `ctx.signal` sent upstream as a cancel. The upstream task id is
 * checkpointed with `ctx.step` (the tool's recovery is "resume" by default), so a gateway
 * restarted mid-task re-attaches to the same upstream task rather than creating another.
 * An upstream that answers the creation with a task another call follows (or followed) fails
 * this call: one upstream task never serves two gateway tasks, whose owners may differ.
 */
export async function followUpstreamTask(host: UpstreamTaskHost, logger: Logger, call: UpstreamCall): Promise<CallToolResult> {
  const { name, ctx, timeoutMs } = call;
  const detach = host.attach(ctx);
  let unbind: (() => void) | undefined;
  let created = false;
  // The creation's progress token lives on with the upstream task: nothing reaches the task once its follow is over.
  let live = true;
  const claim = (taskId: string): (() => void) => {
    const undo = host.bindTask(taskId, ctx);
    if (undo) return undo;
    logger.warn(
      { upstream: host.name, tool: name, taskId: ctx.taskId, upstreamTaskId: taskId },
      "the upstream answered a call with a task another call follows; the call fails",
    );
    throw upstreamError(
      `The upstream server (${host.name}) answered tools/call ${name} with the task of another call (it gave one task ID to two calls); the gateway follows an upstream task for one call only, so this call fails`,
    );
  };
  try {
    const ref = await ctx.step<UpstreamTaskRef>(`upstream task of tools/call ${name}`, async () => {
      const taskId = await createUpstreamTask(host, call, () => live);
      created = true;
      // Bound before it is checkpointed: a task id refused here is never resumed either.
      unbind = claim(taskId);
      return { taskId };
    });
    logger.info(
      { upstream: host.name, tool: name, taskId: ctx.taskId, upstreamTaskId: ref.taskId },
      created ? "created an upstream task" : "re-attached to an upstream task",
    );
    unbind ??= claim(ref.taskId);
    const cancel = () => void cancelUpstream(host, logger, ref.taskId, timeoutMs);
    ctx.signal.addEventListener("abort", cancel, { once: true });
    try {
      return await follow(host, ref.taskId, ctx, timeoutMs, name, !created);
    } finally {
      ctx.signal.removeEventListener("abort", cancel);
    }
  } finally {
    live = false;
    unbind?.();
    detach();
  }
}

/** The upstream task's id; `live()`: whether its progress still goes to the call. */
async function createUpstreamTask(host: UpstreamTaskHost, call: UpstreamCall, live: () => boolean): Promise<string> {
  const { name, args, ctx, timeoutMs } = call;
  // A creation the upstream refused for a forgotten session never ran there: sent once more, on the new session.
  for (let renewed = false; ; renewed = true) {
    const client = await host.client(timeoutMs);
    try {
      // A CLIENT span of the execution, its context in `_meta`: the upstream's task joins this task's trace.
      return await inClientSpan("tools/call", name, () =>
        UPSTREAM.create(
          client,
          { name, args, ttl: call.ttl, meta: traceMetaParams()._meta },
          { signal: ctx.signal, timeout: timeoutMs, onprogress: (p) => void (live() && ctx.progress(p.progress, p.total, p.message)) },
        ),
      );
    } catch (error) {
      if (renewed || ctx.signal.aborted || !host.sessionLost(client, error)) throw error;
    }
  }
}

/** `reattached`: the task was created before a gateway restart, so "not found" means the upstream lost it. */
async function follow(
  host: UpstreamTaskHost,
  taskId: string,
  ctx: ToolContext,
  timeoutMs: number,
  name: string,
  reattached: boolean,
): Promise<CallToolResult> {
  let losses = 0;
  let refusals = 0;
  let said: string | undefined;
  let handle: RemoteTaskHandle<CallToolResult> | null = null;
  let handleClient: Client | null = null;
  try {
    for (;;) {
      let outcome: TaskOutcome<CallToolResult>;
      try {
        const client = await host.client(timeoutMs);
        if (handle === null || client !== handleClient) {
          // A handle speaks over one connection; the next one starts from what the last one saw,
          // so a task seen terminal is not looked at again, only its result fetched.
          const initial = handle?.last ?? undefined;
          handle?.dispose();
          handle = UPSTREAM.task(client, taskId, { requestTimeoutMs: timeoutMs, pollIntervalBoundsMs: POLL_BOUNDS_MS, initial });
          handleClient = client;
        }
        if (handle.last === null || !isTerminalTaskStatus(handle.last.status)) {
          for await (const task of handle.updates({ signal: ctx.signal })) {
            // Each run of updates() yields after its first answer: refusals count only in a row.
            refusals = 0;
            if (task.statusMessage !== undefined && task.statusMessage !== said && !isTerminalTaskStatus(task.status)) {
              said = task.statusMessage;
              await ctx.setStatusMessage(`Upstream: ${said}`);
            }
          }
        }
        outcome = await handle.outcome({ signal: ctx.signal });
      } catch (error) {
        if (ctx.signal.aborted || !(error instanceof TaskError)) throw error;
        if (retryLater(error.code)) {
          if (++refusals > MAX_REFUSALS) {
            throw upstreamError(
              `The upstream server (${host.name}) refused ${MAX_REFUSALS} times in a row to say how its task ${taskId} (tools/call ${name}) goes: ${error.message}`,
            );
          }
          const after = (error.data as { retryAfterMs?: unknown } | undefined)?.retryAfterMs;
          await pause(Math.min(typeof after === "number" && after > 0 ? after : 1000, MAX_REFUSAL_WAIT_MS), ctx.signal);
          continue;
        }
        // Lost and timed out are what the gateway's side concluded (ConnectionError), not codes
        // the upstream answered: its own -32001 is not a timeout.
        if (error instanceof ConnectionError && error.code === RpcCode.ConnectionClosed) {
          if (++losses > MAX_REATTACH) {
            throw upstreamError(
              `The upstream server (${host.name}) closed the connection ${losses} times while the gateway followed its task ${taskId} (tools/call ${name})`,
            );
          }
          continue; // re-attach on the restarted connection: the task lives on upstream if it keeps its tasks
        }
        if (error instanceof ConnectionError && error.code === RpcCode.RequestTimeout) {
          throw upstreamError(
            `The upstream server (${host.name}) did not answer about its task ${taskId} (tools/call ${name}) for ${timeoutMs} ms; the gateway stopped following it`,
          );
        }
        if (error.code === RpcCode.InvalidParams && (losses > 0 || reattached)) {
          throw upstreamError(
            `The upstream server (${host.name}) no longer knows its task ${taskId} (tools/call ${name}): it was restarted without keeping its tasks`,
          );
        }
        throw error;
      }
      // How the upstream task ended is the gateway task's outcome: its result (isError included) or its error, replayed.
      if ("result" in outcome) return outcome.result;
      throw outcome.error;
    }
  } finally {
    handle?.dispose();
  }
}

async function cancelUpstream(host: UpstreamTaskHost, logger: Logger, taskId: string, timeoutMs: number): Promise<void> {
  let handle: RemoteTaskHandle<CallToolResult> | undefined;
  try {
    // The connection the follow used may be gone: the cancel goes over the current one.
    handle = UPSTREAM.task(await host.client(timeoutMs), taskId, { requestTimeoutMs: timeoutMs, pollIntervalBoundsMs: POLL_BOUNDS_MS });
    await handle.cancel();
    logger.info({ upstream: host.name, upstreamTaskId: taskId }, "cancelled the upstream task");
  } catch (error) {
    // Already ended, or the upstream is gone: nothing left to cancel.
    logger.warn(
      { upstream: host.name, upstreamTaskId: taskId, error: error instanceof Error ? error.message : String(error) },
      "could not cancel the upstream task",
    );
  } finally {
    handle?.dispose();
  }
}

function upstreamError(message: string): TaskError {
  return TaskError.protocol(RpcCode.InternalError, message);
}
