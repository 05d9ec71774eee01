/**
 * The victim's tasks of the attack suite: one in each status a task can be in, and a snapshot of
 * everything their owner can see about them, to prove afterwards that nothing changed.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { callToolAsTask, getTask, taskResult, wireMessage } from "./conformance.js";
import type { HttpClient } from "./http-fixture.js";
import { newTaskId } from "../../src/core/task-id.js";

export interface VictimTasks {
  /** Ended with a result. */
  completed: string;
  /** Ended with a JSON-RPC error (the `throw` demo tool). */
  failed: string;
  /** Still running (a long sleep). */
  working: string;
  /** Waiting for the requestor's answer to an elicitation (the `ask` demo tool). */
  inputRequired: string;
}

export const allIds = (tasks: VictimTasks): string[] => [tasks.completed, tasks.failed, tasks.working, tasks.inputRequired];

/** A task's answer as its owner sees it: the result, or the JSON-RPC error. */
export type Outcome = { result: unknown } | { error: { code: number; message: string } };

export async function outcomeOf(request: Promise<unknown>): Promise<Outcome> {
  try {
    return { result: await request };
  } catch (error) {
    if (error instanceof McpError) return { error: { code: error.code, message: wireMessage(error) } };
    throw error;
  }
}

/** Creates one task per status for `owner` and waits until each is there. */
export async function createVictimTasks(owner: HttpClient): Promise<VictimTasks> {
  const completed = (await callToolAsTask(owner.client, "sleep", { ms: 5 })).task.taskId;
  await taskResult(owner.client, completed);
  const failed = (await callToolAsTask(owner.client, "throw", { code: -32001, message: "the victim's failure" })).task.taskId;
  await outcomeOf(taskResult(owner.client, failed));
  const working = (await callToolAsTask(owner.client, "sleep", { ms: 600_000 })).task.taskId;
  const inputRequired = (await callToolAsTask(owner.client, "ask", { question: "the victim's secret question" })).task.taskId;
  await owner.received.waitFor(
    (r) =>
      r.message.method === "notifications/tasks/status" &&
      r.message.params?.["taskId"] === inputRequired &&
      r.message.params["status"] === "input_required",
    "the ask task to be input_required",
  );
  return { completed, failed, working, inputRequired };
}

/** Everything the owner can read about each task: its tasks/get answer, and the outcome of the ended ones. */
export async function snapshot(client: Client, tasks: VictimTasks): Promise<Record<string, unknown>> {
  const shot: Record<string, unknown> = {};
  for (const id of allIds(tasks)) shot[id] = await getTask(client, id);
  shot["completed:outcome"] = await outcomeOf(taskResult(client, tasks.completed));
  shot["failed:outcome"] = await outcomeOf(taskResult(client, tasks.failed));
  return shot;
}

/** A well-formed task id no task has. */
export const unknownId = (): string => newTaskId();
