/**
 * `mcp-tasks tasks get --history`: a task's timeline. MCP has no operation for it in either era,
 * so the CLI reads it from the HTTP route mcp-tasks servers serve beside their MCP endpoint, with
 * their web view: `GET /tasks/api/tasks/:id/timeline` on the target's origin, with the target's
 * bearer token (the same owner binding as tasks/get: the owner's token, or the server's admin
 * token). A server without that route is named as such, not reported as a missing task.
 */
import type { RemoteTaskInfo } from "../mcp/requestor/remote-task-info.js";
import type { TaskTimeline } from "../web/task-timeline.js";
import { ExitCode } from "./exit-codes.js";
import type { Output } from "./output.js";
import type { Target } from "./target.js";

/** The route's path under the target's origin. */
export function timelinePath(taskId: string): string {
  return `/tasks/api/tasks/${encodeURIComponent(taskId)}/timeline`;
}

/** Why the timeline could not be read, and the exit code that says so. */
export class HistoryUnavailableError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = "HistoryUnavailableError";
  }
}

/** Reads the task's timeline from the target's server. */
export async function fetchTimeline(target: Target, taskId: string, timeoutMs = 30_000): Promise<TaskTimeline> {
  if (target.kind !== "http") {
    throw new HistoryUnavailableError(
      "--history needs an HTTP target: the timeline is an HTTP route of mcp-tasks servers (GET /tasks/api/tasks/:id/timeline), not an MCP operation",
      ExitCode.Usage,
    );
  }
  const url = new URL(timelinePath(taskId), target.url);
  if (target.token === undefined) {
    throw new HistoryUnavailableError(
      `--history reads ${url.origin}/tasks/api/… with a bearer token: pass --token (your MCP token, or the server's admin token)`,
      ExitCode.Authentication,
    );
  }
  let response: Response;
  try {
    response = await fetch(url, { headers: { authorization: `Bearer ${target.token}` }, signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    throw new HistoryUnavailableError(`could not read the timeline from ${url.origin}: ${(error as Error).message}`, ExitCode.Connection);
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const message = (body as { error?: { message?: unknown } } | undefined)?.error?.message;
  if (response.ok && body !== undefined && typeof (body as Partial<TaskTimeline>).runs === "object") return body as TaskTimeline;
  if (response.status === 401 || response.status === 403) {
    throw new HistoryUnavailableError(
      `the server refused the token for its timeline route (HTTP ${response.status}): its web view accepts your MCP token or its admin token`,
      ExitCode.Authentication,
    );
  }
  // The route answers a task it does not show with its own JSON "Task not found"; anything else is a server without it.
  if (response.status === 404 && message === "Task not found")
    throw new HistoryUnavailableError(`task not found: ${taskId}`, ExitCode.Failed);
  throw new HistoryUnavailableError(
    `this server serves no task timelines (GET ${url.pathname} answered HTTP ${response.status}): --history needs an mcp-tasks server with its web view on`,
    ExitCode.Failed,
  );
}

function time(ms: number): string {
  return new Date(ms).toISOString();
}

function duration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** The timeline's lines, oldest first: `<ISO time>  <kind>  <what>`. */
export function historyLines(timeline: TaskTimeline): string[] {
  const lines: Array<{ at: number; rank: number; text: string }> = [];
  for (const change of timeline.status) {
    const final = change.status === "completed" || change.status === "failed" || change.status === "cancelled";
    lines.push({
      at: change.at,
      rank: final ? 5 : 0,
      text: `status    ${change.status}${change.statusMessage ? `: ${change.statusMessage}` : ""}${change.node ? ` (on ${change.node})` : ""}`,
    });
  }
  for (const run of timeline.runs) {
    const ended = run.endedAt === null ? "running" : `${run.ended} after ${duration(run.endedAt - run.startedAt)}`;
    lines.push({
      at: run.startedAt,
      rank: 1,
      text: `run       ${run.attempt} (${run.startedBy}), ${ended}${run.node ? `, on ${run.node}` : ""}`,
    });
  }
  for (const step of timeline.steps) {
    const facts = [
      step.ms === null ? null : duration(step.ms),
      step.attempt === null ? null : `run ${step.attempt}`,
      `${step.bytes} bytes`,
    ];
    lines.push({ at: step.at, rank: 2, text: `step      ${step.name}#${step.occurrence}: ${facts.filter(Boolean).join(", ")}` });
  }
  for (const question of timeline.questions) {
    const answer = question.answer === null ? "not answered" : `answered: ${JSON.stringify(question.answer)}`;
    lines.push({ at: question.askedAt, rank: 3, text: `question  ${question.method}, ${answer}` });
  }
  for (const wait of timeline.waits) {
    const what = wait.kind === "timer" ? "timer" : `event ${wait.event ?? ""}`;
    lines.push({ at: wait.since ?? wait.at ?? 0, rank: 4, text: `wait      ${what}: ${wait.state}${wait.parked ? " (parked)" : ""}` });
  }
  for (const delivery of timeline.webhooks ?? []) {
    lines.push({
      at: delivery.at,
      rank: 6,
      text: `webhook   ${delivery.type} → ${delivery.url}: ${delivery.state}, ${delivery.attempts} attempt(s)`,
    });
  }
  // Lines of one instant: a status change before the run it starts, and a final status after the step that led to it.
  return lines.sort((a, b) => a.at - b.at || a.rank - b.rank).map((line) => `${time(line.at)}  ${line.text}`);
}

/** Prints the task (as tasks/get read it) and its timeline; under --json one object, the timeline as `history`. */
export function printHistory(out: Output, task: RemoteTaskInfo, timeline: TaskTimeline): void {
  if (out.json) {
    out.stdout.write(`${JSON.stringify({ ...task, history: timeline })}\n`);
    return;
  }
  out.stdout.write(`taskId:        ${task.taskId}\nstatus:        ${task.status}\n${historyLines(timeline).join("\n")}\n`);
}
