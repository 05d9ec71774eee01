import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Caller } from "../../core/caller.js";
import { deadlineSignal } from "../../core/deadline-signal.js";
import { TaskError } from "../../core/errors.js";
import { isTerminal } from "../../core/task-status.js";
import type { TaskEngine } from "../../runtime/task-engine.js";
import { withOperation } from "../param-checks.js";
import type { TaskServerConfig } from "../task-server-config.js";
import type { RegisteredTool } from "../tool-definition.js";
import { endedAnswer } from "./background-call.js";
import { statusAnswer, taskSummary } from "./task-summary.js";

/** The task operations as tools, for clients that declared no task support (docs/hosts/README.md). */
export const TASK_TOOLS = ["task_status", "task_result", "task_cancel", "task_list"] as const;
export type TaskToolName = (typeof TASK_TOOLS)[number];

const TASK_ID: Tool["inputSchema"] = {
  type: "object",
  properties: { taskId: { type: "string", description: "The task id a background answer gave" } },
  required: ["taskId"],
};

const DESCRIPTORS: Readonly<Record<TaskToolName, Omit<Tool, "name">>> = {
  task_status: {
    description: "Where a background task stands: its status, progress and any question it waits on.",
    inputSchema: TASK_ID,
    annotations: { readOnlyHint: true },
  },
  task_result: {
    description:
      "The result of a background task: waits for it a bounded time, then answers with the result, or with the status when it is still running (call again).",
    inputSchema: TASK_ID,
    annotations: { readOnlyHint: true },
  },
  task_cancel: { description: "Cancels a background task.", inputSchema: TASK_ID, annotations: { destructiveHint: true } },
  task_list: {
    description: "Your tasks, newest first, one page at a time.",
    inputSchema: { type: "object", properties: { cursor: { type: "string", description: "nextCursor of the previous page" } } },
    annotations: { readOnlyHint: true },
  },
};

/**
 * Which of our task tools a fallback client sees: a user tool of the same name wins (it is
 * listed and called instead; ours is not offered), so registering one never breaks a server.
 */
export function taskToolsBeside(tools: ReadonlyMap<string, RegisteredTool>): Tool[] {
  return TASK_TOOLS.filter((name) => !tools.has(name)).map((name) => ({ name, ...DESCRIPTORS[name] }));
}

/** Whether `name` is one of our task tools for this server (not shadowed by a user tool). */
export function isTaskTool(name: unknown, tools: ReadonlyMap<string, RegisteredTool>): name is TaskToolName {
  return typeof name === "string" && (TASK_TOOLS as readonly string[]).includes(name) && !tools.has(name);
}

/** A task tool's call: who calls, when they give up, and (in an era with a stream) how to relay the task's questions. */
export interface TaskToolCall {
  caller: Caller;
  signal: AbortSignal;
  /**
   * Waits for the task's end, delivering its questions on this call's stream meanwhile (the
   * 2025-11-25 session's `tasks/result`); ends early when `signal` aborts. Absent: only waits.
   */
  relay?: (taskId: string, signal: AbortSignal) => Promise<unknown>;
}

const byId = z.object({ taskId: z.string().min(1).max(256) });
const page = z.object({ cursor: z.string().optional() });

/**
 * Runs one task tool. A bad argument, or an id unknown, foreign or expired, is the JSON-RPC -32602
 * that `tasks/get` answers (T-ERR, T-SEC-3); anything about the task itself is a CallToolResult.
 */
export async function callTaskTool(
  { engine, config }: { engine: TaskEngine; config: Pick<TaskServerConfig, "taskResultWaitMs"> },
  name: TaskToolName,
  args: unknown,
  call: TaskToolCall,
): Promise<CallToolResult> {
  if (name === "task_list") {
    const { cursor } = parse(page, args, name);
    const listed = await engine.list(cursor, call.caller);
    const tasks = listed.tasks.map((task) => taskSummary(task));
    const structured = { tasks, ...(listed.nextCursor !== undefined && { nextCursor: listed.nextCursor }) };
    return { content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured };
  }
  const { taskId } = parse(byId, args, name);
  const task = await lookup(() => engine.get(taskId, call.caller));
  if (name === "task_status")
    return statusAnswer(
      taskSummary(task, await pendingOf(engine, task.id, task.status, call.caller)),
      `Task ${task.id} is ${task.status}.`,
    );
  if (name === "task_cancel") {
    if (isTerminal(task.status))
      return statusAnswer(taskSummary(task), `Task ${task.id} had already ended (${task.status}); nothing to cancel.`, true);
    try {
      return statusAnswer(taskSummary(await engine.cancel(task.id, call.caller)), `Task ${task.id} was cancelled.`);
    } catch (error) {
      // It ended between the read and the cancel.
      if (!(error instanceof TaskError && error.kind === "terminal")) throw error;
      const now = await engine.get(task.id, call.caller);
      return statusAnswer(taskSummary(now), `Task ${task.id} had already ended (${now.status}); nothing to cancel.`, true);
    }
  }
  return taskResult(engine, config.taskResultWaitMs, task.id, call);
}

async function taskResult(engine: TaskEngine, waitMs: number, taskId: string, call: TaskToolCall): Promise<CallToolResult> {
  const waited = deadlineSignal({ signals: [call.signal], timeoutMs: waitMs, reason: "task_result wait over" });
  try {
    if (call.relay) await call.relay(taskId, waited.signal);
    else await engine.awaitOutcome(taskId, call.caller, waited.signal);
  } catch {
    // Out of time, hung up, or the task ended in an error: the read below says which.
  } finally {
    waited.clear();
  }
  const task = await lookup(() => engine.get(taskId, call.caller));
  if (isTerminal(task.status)) return endedAnswer(task);
  const pending = await pendingOf(engine, task.id, task.status, call.caller);
  const sentence =
    task.status === "input_required"
      ? `Task ${task.id} still runs and needs input: call task_result again to be asked (when your client supports elicitation).`
      : `Task ${task.id} still runs; call task_result again to keep waiting.`;
  return statusAnswer(taskSummary(task, pending), sentence);
}

function pendingOf(engine: TaskEngine, taskId: string, status: string, caller: Caller): ReturnType<TaskEngine["pendingInputs"]> {
  return status === "input_required" ? engine.pendingInputs(taskId, caller) : Promise.resolve([]);
}

async function lookup<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    throw withOperation("Failed to retrieve task", error);
  }
}

function parse<T>(schema: z.ZodType<T>, args: unknown, tool: string): T {
  const parsed = schema.safeParse(args ?? {});
  if (!parsed.success) {
    const detail = parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
    throw TaskError.invalidParams(`Invalid arguments for tool ${tool}: ${detail}`);
  }
  return parsed.data;
}
