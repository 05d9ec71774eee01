import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CreateMessageResultSchema,
  ElicitResultSchema,
  ListRootsResultSchema,
  type CreateMessageResult,
  type ElicitResult,
  type ListRootsResult,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import { RpcCode, TaskError } from "../core/errors.js";
import { checkedMs, plainWaits, wakeTime } from "./plain-waits.js";
import type { TaskContext } from "../runtime/task-context.js";
import { CapabilityError } from "./capability-error.js";
import type { TaskEra } from "./era.js";
import type { LogThreshold } from "./logging/log-level.js";
import type { AskOptions, ToolContext } from "./tool-definition.js";

export const ELICIT = "elicitation/create";
export const SAMPLE = "sampling/createMessage";
export const ROOTS = "roots/list";

/** Methods this client can answer, from its declared capabilities. */
export function acceptedMethods(capabilities: { elicitation?: unknown; sampling?: unknown; roots?: unknown } | undefined): string[] {
  const accepts: string[] = [];
  if (capabilities?.elicitation) accepts.push(ELICIT);
  if (capabilities?.sampling) accepts.push(SAMPLE);
  if (capabilities?.roots) accepts.push(ROOTS);
  return accepts;
}

function parseAnswer<T>(
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } },
  value: unknown,
  method: string,
): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw TaskError.protocol(RpcCode.InvalidParams, `The requestor answered ${method} with an invalid result`);
  return parsed.data;
}

/** The ToolContext of a tool running as a task: every exchange goes through the engine. */
export function taskToolContext(ctx: TaskContext, owner: string | null): ToolContext {
  return {
    taskId: ctx.taskId,
    owner,
    signal: ctx.signal,
    can: { elicit: ctx.accepts(ELICIT), sample: ctx.accepts(SAMPLE), roots: ctx.accepts(ROOTS) },
    progress: (progress, total, message) => ctx.progress(progress, total, message),
    log: (level, data, logger) => ctx.log(level, data, logger),
    setStatusMessage: (message) => ctx.setStatusMessage(message),
    step: (name, fn) => ctx.step(name, fn),
    sleep: (duration) => ctx.sleep(wakeTime(duration)),
    waitForEvent: (name, options) =>
      ctx.waitForEvent(name, options?.timeoutMs === undefined ? null : Date.now() + checkedMs(options.timeoutMs, "timeoutMs")),
    async elicit(params, ask): Promise<ElicitResult> {
      if (!ctx.accepts(ELICIT)) throw new CapabilityError("elicitation");
      return parseAnswer(ElicitResultSchema, await ctx.request(ELICIT, withAsk(params, ask)), ELICIT);
    },
    async sample(params, ask): Promise<CreateMessageResult> {
      if (!ctx.accepts(SAMPLE)) throw new CapabilityError("sampling");
      return parseAnswer(CreateMessageResultSchema, await ctx.request(SAMPLE, withAsk(params, ask)), SAMPLE);
    },
    async listRoots(): Promise<ListRootsResult> {
      if (!ctx.accepts(ROOTS)) throw new CapabilityError("roots");
      return parseAnswer(ListRootsResultSchema, await ctx.request(ROOTS, {}), ROOTS);
    },
  };
}

/** The ToolContext of a plain (non-task) call of a session of `era`: requests and progress ride the call's own stream. */
export function plainToolContext(
  era: Pick<TaskEra, "wire" | "requestOfClient">,
  server: Server,
  request: {
    requestId: RequestId;
    signal: AbortSignal;
    progressToken: string | number | undefined;
    logThreshold: LogThreshold;
    owner: string | null;
    closeStream?: (() => void) | undefined;
  },
): ToolContext {
  const accepts = acceptedMethods(server.getClientCapabilities());
  const options = { relatedRequestId: request.requestId, signal: request.signal, timeout: 24 * 60 * 60 * 1000 };
  return {
    taskId: null,
    owner: request.owner,
    signal: request.signal,
    can: { elicit: accepts.includes(ELICIT), sample: accepts.includes(SAMPLE), roots: accepts.includes(ROOTS) },
    progress(progress, total, message) {
      if (request.progressToken === undefined || request.signal.aborted) return;
      void server
        .notification(
          {
            method: "notifications/progress",
            params: {
              progressToken: request.progressToken,
              progress,
              ...(total !== undefined && { total }),
              ...(message !== undefined && { message }),
            },
          },
          { relatedRequestId: request.requestId },
        )
        .catch(() => {});
    },
    log(level, data, logger) {
      // Related to the call, so it rides the call's stream; below the session's level, not sent.
      if (request.signal.aborted || !request.logThreshold.admits(level)) return;
      void server.notification(era.wire.logMessage(level, data, logger), { relatedRequestId: request.requestId }).catch(() => {});
    },
    async setStatusMessage() {},
    // A plain call has no task to resume: nothing to checkpoint.
    step: (_name, fn) => fn(),
    ...plainWaits(request.signal),
    closeStream: () => request.closeStream?.(),
    async elicit(params, ask) {
      if (!accepts.includes(ELICIT)) throw new CapabilityError("elicitation");
      if (ask?.asTask) return askAsTask(era, server, request, ELICIT, params, ElicitResultSchema, ask);
      return server.request({ method: ELICIT, params }, ElicitResultSchema, options);
    },
    async sample(params, ask) {
      if (!accepts.includes(SAMPLE)) throw new CapabilityError("sampling");
      if (ask?.asTask) return askAsTask(era, server, request, SAMPLE, params, CreateMessageResultSchema, ask);
      return server.request({ method: SAMPLE, params }, CreateMessageResultSchema, options);
    },
    async listRoots() {
      if (!accepts.includes(ROOTS)) throw new CapabilityError("roots");
      return server.request({ method: ROOTS }, ListRootsResultSchema, options);
    },
  };
}

/**
 * A tool running as a task asks through the engine's queue (T-INPUT); `task` in the stored params
 * tells the delivery to send it as a client-hosted task (see sendInputRequest).
 */
function withAsk<P extends object>(params: P, ask: AskOptions | undefined): P | (P & { task: { ttl?: number } }) {
  if (!ask?.asTask) return params;
  return { ...params, task: { ...(ask.ttl !== undefined && { ttl: ask.ttl }) } };
}

/** A plain call's request as a client-hosted task, on the call's own stream (relatedRequestId). */
function askAsTask<T>(
  era: Pick<TaskEra, "requestOfClient">,
  server: Server,
  request: { requestId: RequestId; signal: AbortSignal },
  method: string,
  params: object,
  schema: z.ZodType<T>,
  ask: AskOptions,
): Promise<T> {
  return era.requestOfClient(server, method, params as Record<string, unknown>, schema, {
    relatedRequestId: request.requestId,
    signal: request.signal,
    ...(ask.ttl !== undefined && { ttl: ask.ttl }),
  });
}
