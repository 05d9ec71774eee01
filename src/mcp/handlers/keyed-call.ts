import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Caller } from "../../core/caller.js";
import { checkIdempotencyKey, derivedKey, keyInProgress, requestedKey, requestorKeyOf, type TaskKey } from "../../core/idempotency.js";
import { isTerminal } from "../../core/task-status.js";
import type { TaskRecord } from "../../core/task.js";
import type { TaskEngine } from "../../runtime/task-engine.js";
import type { TaskServerConfig } from "../task-server-config.js";
import type { RegisteredTool } from "../tool-definition.js";
import { endedAnswer } from "../fallback/background-call.js";

/**
 * Idempotent tools/call (SEP-3182, docs/idempotency.md), the part every era shares: the
 * era reads `idempotencyKey` from its request and hands it here unchecked.
 */

/**
 * The key a call names its operation with: the requestor's (checked: -32602 when not a string of
 * 1–255 characters), or none. Honoured only with task support on (the capability is declared then).
 */
export function requestorKey(
  config: Pick<TaskServerConfig, "tasks">,
  raw: unknown,
  tool: RegisteredTool,
  args: Record<string, unknown>,
): TaskKey | null {
  if (raw === undefined || !config.tasks) return null;
  return requestedKey(checkIdempotencyKey(raw), tool.name, args);
}

/**
 * Whether a tool's repeated identical keyless plain calls attach to the running one instead of
 * starting another: it declared `annotations.idempotentHint: true` (or `dedupe: true`).
 */
export function dedupesKeylessCalls(tool: RegisteredTool): boolean {
  return tool.definition.dedupe ?? tool.definition.annotations?.idempotentHint === true;
}

/**
 * The key of a fallback call (a host without tasks): the requestor's, else for a tool that
 * dedupes keyless calls one derived from its name and arguments, so a host's retry of a call
 * still running names the same task.
 */
export function fallbackKey(requested: TaskKey | null, tool: RegisteredTool, args: Record<string, unknown>): TaskKey | null {
  return requested ?? (dedupesKeylessCalls(tool) ? derivedKey(tool.name, args) : null);
}

/**
 * A plain (not task-augmented) keyed call, answered as a plain call is: the first runs as a task
 * under the key, awaited to its end; a later one with the same key replays what that task ended
 * with (its result, or its JSON-RPC error), or while it still runs is refused with the SEP's
 * in-progress error (-32003, `data.type` "idempotency_key_in_progress"), never run twice.
 */
export async function answerKeyedPlainly(
  engine: TaskEngine,
  keyed: { task: TaskRecord; created: boolean },
  key: TaskKey,
  caller: Caller,
  signal: AbortSignal,
): Promise<CallToolResult> {
  if (!keyed.created) {
    if (!isTerminal(keyed.task.status)) throw keyInProgress(requestorKeyOf(key));
    return endedAnswer(keyed.task);
  }
  return endedAnswer(await engine.awaitOutcome(keyed.task.id, caller, signal));
}
