import { Command, Option } from "commander";
import type { RemoteTaskInfo } from "../mcp/requestor/remote-task-info.js";
import { exitCodeOf, ExitCode } from "./exit-codes.js";
import { followTask } from "./follow-task.js";
import { isTerminal, TASK_STATUSES } from "../core/task-status.js";
import { fileJournal } from "../client/task-journal.js";
import { answerObject, positiveInt } from "./options.js";
import { reattachTo } from "./reattach.js";
import { printError, printTask, type Output } from "./output.js";
import { printTaskTable, selectTasks, type ListSource } from "./task-list-view.js";
import { positionalArguments, requestorCommand, takeTarget, targetArgs, usageError, type RequestorOptions } from "./requestor-options.js";
import { journalPath, stateDir } from "./state-dir.js";
import { connectTarget, storedSessions, type Connection, type Target } from "./target.js";
import { toolsOf } from "./task-creation-record.js";
import { fetchTimeline, HistoryUnavailableError, printHistory } from "./task-history.js";
import { isInteractive, terminalHandlers } from "./terminal/interactive.js";
import { ProgressView } from "./terminal/progress-view.js";
import { COMMAND_SUMMARIES } from "./command-summaries.js";
import { RpcCode, TaskError } from "../core/errors.js";
import { RemoteError } from "../mcp/requestor/requestor-errors.js";

type Operation = "list" | "get" | "result" | "cancel";

interface ListOptions extends RequestorOptions {
  history?: boolean;
  status?: string;
  limit?: number;
  answer?: Array<Record<string, unknown>>;
}

/** `mcp-tasks tasks list|get|result|cancel <target> [taskId]`. */
export function tasksCommand(): Command {
  const tasks = new Command("tasks").description(COMMAND_SUMMARIES.tasks.description);
  const describe: Record<Operation, string> = {
    list: "list the tasks the server lets you see (every page of tasks/list); where the era has no tasks/list (2026-07-28), the tasks this state directory's runs created (its journal), each read from the server",
    get: "show a task's status (tasks/get); with --history, its whole timeline",
    result: "wait for a task's result (tasks/result), answering its questions; exit code as `call`",
    cancel: "cancel a task (tasks/cancel)",
  };
  for (const op of ["list", "get", "result", "cancel"] as const) {
    const needsId = op !== "list";
    const command: Command = requestorCommand(op)
      .description(describe[op])
      .usage(needsId ? "<target> <taskId> [options]\n       mcp-tasks tasks " + op + " --stdio <command> <taskId>" : "<target> [options]");
    positionalArguments(command, needsId ? [["taskId", "the task's id"]] : [], async (positionals, opts: ListOptions) => {
      process.exitCode = await run(command, op, positionals, opts);
    });
    if (op === "list") {
      command
        .addOption(new Option("--status <status>", "only tasks in this status").choices(TASK_STATUSES))
        .option("--limit <n>", "at most this many (the newest)", positiveInt);
    }
    if (op === "get") {
      command.option(
        "--history",
        "also show the task's timeline: status changes, runs, steps, questions, waits, webhook deliveries (an HTTP route of mcp-tasks servers: GET /tasks/api/tasks/:id/timeline, read with --token)",
      );
    }
    if (op === "result") {
      command.option(
        "--answer <json>",
        "accept the task's next elicitation with this content, without prompting (repeatable, used in order)",
        answerObject,
      );
    }
    tasks.addCommand(command);
  }
  return tasks;
}

async function run(command: Command, op: Operation, positionals: string[], opts: ListOptions): Promise<number> {
  let target: Target;
  let taskId: string | undefined;
  try {
    const taken = takeTarget(positionals, opts);
    target = taken.target;
    const expected = op === "list" ? 0 : 1;
    if (taken.rest.length < expected) throw new Error("missing <taskId>");
    if (taken.rest.length > expected) throw new Error(`unexpected arguments: ${taken.rest.slice(expected).join(" ")}`);
    taskId = taken.rest[0];
  } catch (error) {
    usageError(command, error);
  }
  const out: Output = { json: opts.json === true, stdout: process.stdout, stderr: process.stderr };
  if (op === "list")
    return await list(target, out, {
      ...(opts.status !== undefined && { status: opts.status }),
      ...(opts.limit !== undefined && { limit: opts.limit }),
    });
  const id = taskId as string;
  const view = op === "result" && isInteractive() ? new ProgressView(process.stderr) : null;
  const handlers = terminalHandlers(view, opts.answer, targetArgs(target));
  let connection: Connection;
  try {
    connection = await connectTarget(target, handlers, stateDir(), { taskId: id });
  } catch (error) {
    printError(out, error, { taskId: id });
    return exitCodeOf(error);
  }
  try {
    if (op === "get") {
      const task = await connection.tasks.get(id);
      if (opts.history !== true) {
        printTask(out, task);
        return ExitCode.Ok;
      }
      try {
        printHistory(out, task, await fetchTimeline(target, id));
        return ExitCode.Ok;
      } catch (error) {
        if (!(error instanceof HistoryUnavailableError)) throw error;
        printError(out, error, { taskId: id, status: task.status });
        return error.exitCode;
      }
    }
    if (op === "cancel") {
      // 2025-11-25 refuses to cancel a task that has ended (T-CANCEL-2); 2026-07-28 acknowledges
      // it and the task reads as it ended (X-CANCEL-6), a cancelled one as a cancel that worked.
      // The command says the same in both: it looks first, and after for a race it lost.
      const before = await connection.tasks.get(id);
      if (isTerminal(before.status)) throw TaskError.terminal(before.status);
      const task = await connection.tasks.cancel(id);
      if (isTerminal(task.status) && task.status !== "cancelled") throw TaskError.terminal(task.status);
      printTask(out, task);
      return ExitCode.Ok;
    }
    const onProgress = (p: { progress: number; total?: number; message?: string }): void => view?.progress(p.progress, p.total, p.message);
    const reattach = reattachTo(target, id, handlers, stateDir(), onProgress);
    return await followTask(await connection.tasks.resume(id, { onProgress }), out, view, {
      target: targetArgs(target),
      ...(reattach && { reattach }),
    });
  } catch (error) {
    view?.stop();
    printError(out, error, { taskId: id, ...(await expiryFromJournal(error, id)) });
    return exitCodeOf(error);
  } finally {
    await connection.close();
  }
}

/** How many stored sessions `tasks list` asks at most (the most recent ones). */
const LISTED_SESSIONS = 20;

/**
 * `tasks list`: the tasks of every stored session of the target (where this user's runs created
 * tasks), each task once. A receiver that binds tasks to sessions lists only the calling session's;
 * one that binds them to the principal lists the same in each. Without a live stored session, a
 * new session asks. Under 2026-07-28 there is no `tasks/list` (X-LEG-1): the tasks this state
 * directory's runs created on the target (the journal) are each read with `tasks/get`; those the
 * server no longer knows (expired, swept) are left out.
 */
async function list(target: Target, out: Output, filter: { status?: string; limit?: number }): Promise<number> {
  const dir = stateDir();
  const found = new Map<string, RemoteTaskInfo>();
  const handlers = terminalHandlers(null);
  const connections: Connection[] = [];
  try {
    for (const sessionId of await storedSessions(target, dir, LISTED_SESSIONS)) {
      const resumed = await connectTarget(target, handlers, dir, { sessionId }).catch(() => null);
      if (resumed) connections.push(resumed);
      // A stateless connection ignores the session: one is all it takes.
      if (resumed && !resumed.tasks.features.sessions) break;
    }
    if (connections.length === 0) connections.push(await connectTarget(target, handlers, dir));
    const entries = await fileJournal(journalPath(dir))
      .entries()
      .catch(() => []);
    let source: ListSource = { kind: "server" };
    for (const connection of connections) {
      if (!connection.tasks.features.canList) {
        const protocol = connection.tasks.protocol;
        // Created in either era: a server that speaks both reads a task of the older one too (X-LEG-5).
        const ids = new Set(entries.filter((e) => e.op === "created" && e.target === connection.label).map((e) => e.taskId));
        // Nothing to read back still asks the server once: an unreachable one is an error, not "no tasks".
        if (ids.size === 0) await connection.tasks.listTools();
        for (const id of ids) {
          // A task the server no longer knows (expired, swept) is left out; an unreachable server is an error.
          const task = await connection.tasks.get(id).catch((error: unknown) => {
            if (error instanceof RemoteError) return null;
            throw error;
          });
          if (task && !found.has(id)) found.set(id, task);
        }
        source = { kind: "journal", note: journalNote(connection.label, protocol, journalPath(dir)) };
        continue;
      }
      for await (const task of connection.tasks.list()) if (!found.has(task.taskId)) found.set(task.taskId, task);
    }
    const toolOf = toolsOf(entries, found.keys(), connections[0]?.label ?? "");
    printTaskTable(out, selectTasks([...found.values()], filter), toolOf, Date.now(), source);
    return ExitCode.Ok;
  } catch (error) {
    printError(out, error);
    return exitCodeOf(error);
  } finally {
    for (const connection of connections) await connection.close();
  }
}

/** What a journal-only listing says about itself, and how to ask the server instead. */
function journalNote(target: string, protocol: string, journal: string): string {
  return (
    `Listed from the local journal (${journal}): ${protocol} has no tasks/list, so these are the tasks this state directory's runs created on ${target}, each read from the server. ` +
    `Tasks created elsewhere are not here; if the server also speaks 2025-11-25, it lists every task you may see: mcp-tasks tasks list ${target} --protocol 2025-11-25`
  );
}

/**
 * A "not found" for a task this state directory's runs created, once past the ttl the receiver
 * gave it: the task expired and was swept (T-ERR-7), not a wrong id.
 */
async function expiryFromJournal(error: unknown, taskId: string): Promise<{ expired?: true; ttl?: number }> {
  if (!(error instanceof RemoteError) || error.code !== RpcCode.InvalidParams) return {};
  const entries = await fileJournal(journalPath(stateDir()))
    .entries()
    .catch(() => []);
  const created = entries.find((e) => e.op === "created" && e.taskId === taskId);
  if (typeof created?.ttl !== "number") return {};
  return Date.parse(created.at) + created.ttl <= Date.now() ? { expired: true, ttl: created.ttl } : {};
}
