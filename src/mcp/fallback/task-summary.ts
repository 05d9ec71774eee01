import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { InputRequest, TaskRecord } from "../../core/task.js";

/** The `structuredContent` every fallback answer about a task carries: what a model needs to go on. */
export interface TaskSummary {
  [key: string]: unknown;
  taskId: string;
  status: string;
  statusMessage?: string;
  tool?: string;
  progress?: { progress: number; total?: number; message?: string };
  /** The questions the task waits on, when it is `input_required`. */
  questions?: string[];
  /** The tool to call next: `task_result` until the task ends. */
  pollWith?: "task_result";
  createdAt: string;
  lastUpdatedAt: string;
}

export function taskSummary(task: TaskRecord, pending: readonly InputRequest[] = []): TaskSummary {
  const ended = task.status === "completed" || task.status === "failed" || task.status === "cancelled";
  const questions = pending.map(questionOf);
  return {
    taskId: task.id,
    status: task.status,
    ...(task.statusMessage !== null && { statusMessage: task.statusMessage }),
    tool: task.name,
    ...(task.progress !== null && { progress: task.progress }),
    ...(questions.length > 0 && { questions }),
    ...(!ended && { pollWith: "task_result" as const }),
    createdAt: new Date(task.createdAt).toISOString(),
    lastUpdatedAt: new Date(task.updatedAt).toISOString(),
  };
}

/** What a queued question asks, in one line (an elicitation's message, else its method). */
function questionOf(input: InputRequest): string {
  const params = input.params as { message?: unknown } | undefined;
  return typeof params?.message === "string" ? `${input.method}: ${params.message}` : input.method;
}

/** A CallToolResult saying where a task stands: a sentence for the model, the summary for programs. */
export function statusAnswer(summary: TaskSummary, sentence: string, isError = false): CallToolResult {
  return {
    content: [{ type: "text", text: `${sentence}\n${JSON.stringify(summary)}` }],
    structuredContent: summary,
    ...(isError && { isError: true }),
  };
}
