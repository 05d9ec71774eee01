/**
 * What the reliability suite knows about the tasks it created: every task whose CreateTaskResult
 * reached the client (acknowledged), with the arguments it was called with, so that afterwards
 * each one can be judged from what the server says of it — lost (unknown), stuck (not terminal),
 * wrong (a result other than its arguments imply), or right.
 */
import { RpcAnswerError, type RawSession } from "./raw-session.js";

export type LoadCall = { tool: "sleep"; args: { ms: number } } | { tool: "steps"; args: { count: number; ms: number } };

export interface Acknowledged {
  taskId: string;
  call: LoadCall;
}

export interface Verdict {
  acknowledged: number;
  /** Completed with the result the arguments imply. */
  completed: number;
  /**
   * Failed by the server with a message saying why — a crash interrupted a tool without recovery
   * (`sleep`), or the store refused a write (a full disk): terminal and said so, not lost.
   */
  failedSaidWhy: number;
  lost: number;
  stuck: number;
  wrong: number;
  /** Up to five examples of what was lost, stuck or wrong, for the report. */
  examples: string[];
}

/** What the server says when it fails a task a crash interrupted (recovery.ts, the lease reaper, a drain). */
const INTERRUPTED = /server stopped while this task was running|worker stopped responding|shut down|Handed back/i;
/** A handler's write the store refused (src/core/storage-condition.ts). */
const STORE_REFUSED = /^The task store/;
const TERMINAL = new Set(["completed", "failed", "cancelled"]);

export class TaskLedger {
  readonly acknowledged: Acknowledged[] = [];

  add(taskId: string, call: LoadCall): void {
    this.acknowledged.push({ taskId, call });
  }

  /**
   * Waits until every acknowledged task is terminal or `settleMs` has passed, then judges each.
   * Errors other than a JSON-RPC answer (the server unreachable) propagate: the run is broken.
   */
  async judge(session: RawSession, settleMs: number): Promise<Verdict> {
    const deadline = Date.now() + settleMs;
    const pending = new Map(this.acknowledged.map((a) => [a.taskId, a]));
    const verdict: Verdict = {
      acknowledged: this.acknowledged.length,
      completed: 0,
      failedSaidWhy: 0,
      lost: 0,
      stuck: 0,
      wrong: 0,
      examples: [],
    };
    const note = (kind: keyof Omit<Verdict, "acknowledged" | "examples">, what: string): void => {
      verdict[kind]++;
      if (kind !== "completed" && kind !== "failedSaidWhy" && verdict.examples.length < 5) verdict.examples.push(`${kind}: ${what}`);
    };
    const check = async (taskId: string, ack: Acknowledged): Promise<void> => {
      let task: Record<string, unknown>;
      try {
        task = await politely(() => session.request("tasks/get", { taskId }));
      } catch (error) {
        if (!(error instanceof RpcAnswerError)) throw error;
        pending.delete(taskId);
        note("lost", `${taskId} (${ack.call.tool}): ${error.error.message}`);
        return;
      }
      const status = String(task["status"]);
      if (!TERMINAL.has(status)) return;
      pending.delete(taskId);
      await this.judgeTerminal(session, ack, status, String(task["statusMessage"] ?? ""), note);
    };
    for (;;) {
      // A few lookups at once: one at a time, the hundreds of thousands of tasks of a 30-minute
      // soak took longer to judge than to make.
      const queue = [...pending];
      let taken = 0;
      const lane = async (): Promise<void> => {
        for (let next = queue[taken++]; next !== undefined; next = queue[taken++]) await check(...next);
      };
      await Promise.all(Array.from({ length: JUDGE_LANES }, lane));
      if (pending.size === 0 || Date.now() >= deadline) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    for (const [taskId, ack] of pending) note("stuck", `${taskId} (${ack.call.tool}) still not terminal after ${settleMs} ms`);
    return verdict;
  }

  private async judgeTerminal(
    session: RawSession,
    ack: Acknowledged,
    status: string,
    statusMessage: string,
    note: (kind: "completed" | "failedSaidWhy" | "wrong", what: string) => void,
  ): Promise<void> {
    const { taskId, call } = ack;
    if (status === "failed" && call.tool === "sleep" && INTERRUPTED.test(statusMessage)) return note("failedSaidWhy", taskId);
    if (status === "failed" && STORE_REFUSED.test(statusMessage)) return note("failedSaidWhy", taskId);
    if (status !== "completed") return note("wrong", `${taskId} (${call.tool}) ${status}: ${statusMessage}`);
    let result: Record<string, unknown>;
    try {
      result = await politely(() => session.request("tasks/result", { taskId }));
    } catch (error) {
      return note("wrong", `${taskId} (${call.tool}) completed but tasks/result failed: ${String(error)}`);
    }
    const text = (result["content"] as { text?: string }[] | undefined)?.[0]?.text ?? "";
    if (call.tool === "sleep") {
      return text === `slept ${call.args.ms} ms` ? note("completed", taskId) : note("wrong", `${taskId} sleep ${call.args.ms}: ${text}`);
    }
    const structured = result["structuredContent"] as { count?: number; ran?: number; restored?: number } | undefined;
    const right =
      structured?.count === call.args.count &&
      (structured.ran ?? -1) + (structured.restored ?? -1) === call.args.count &&
      text === `ran ${structured.ran} of ${call.args.count} steps, restored ${structured.restored} from checkpoints`;
    return right ? note("completed", taskId) : note("wrong", `${taskId} steps ${JSON.stringify(call.args)}: ${text}`);
  }
}

/** Lookups in flight at once while judging. */
const JUDGE_LANES = 8;

/** Sends again after `retryAfterMs` while refused as rate-limited (-32029) or unavailable (-32003): a refusal says nothing of the task. */
async function politely<T>(send: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (error) {
      const code = error instanceof RpcAnswerError ? error.error.code : undefined;
      if ((code !== -32029 && code !== -32003) || attempt >= 100) throw error;
      const after = (error as RpcAnswerError).error.data as { retryAfterMs?: number } | undefined;
      await new Promise((r) => setTimeout(r, Math.max(10, after?.retryAfterMs ?? 100)));
    }
  }
}

/** One line of the table every scenario prints. */
export function verdictRow(scenario: string, v: Verdict): string {
  return `| ${scenario} | ${v.acknowledged} | ${v.completed} | ${v.failedSaidWhy} | ${v.lost} | ${v.stuck} | ${v.wrong} |`;
}

export const VERDICT_HEADER =
  "| scenario | acknowledged | completed | failed, said why | lost | stuck | wrong |\n|---|---|---|---|---|---|---|";
