/**
 * A steady stream of short `sleep` tasks on a cluster's fronts, in both protocol eras, for tests
 * that break the store underneath (a PostgreSQL restart, a cut connection): every request is
 * retried while it fails in a way the requestor is told to retry (the retryable -32003, a refused
 * HTTP connection), and every JSON-RPC error answered is kept, so the test can say which codes a
 * requestor saw and how each task ended.
 */
import { OWN_ERROR_CODES } from "../../src/mcp/own-error-codes.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { callToolAsTask, getTask, taskResult } from "./conformance.js";
import { PlainJsonClient } from "./plain-json-client.js";
import { isTerminal, statelessRpc } from "./stateless-client.js";

/** -32003: the store is unreachable (or busy, or the node draining): the same request may succeed shortly. */
/** The store-unreachable (or draining) refusal in each era: worth retrying, never a failure. */
const RETRYABLE = {
  "2025-11-25": OWN_ERROR_CODES.unavailable.codes["2025-11-25"],
  "2026-07-28": OWN_ERROR_CODES.unavailable.codes["2026-07-28"],
} as const;

export interface AnsweredError {
  era: "2025-11-25" | "2026-07-28";
  method: string;
  code: number;
  message: string;
}

export interface EndedTask {
  era: "2025-11-25" | "2026-07-28";
  taskId: string;
  status: string;
  statusMessage?: string | undefined;
}

export class TaskLoad {
  readonly errors: AnsweredError[] = [];
  readonly ended: EndedTask[] = [];
  /** Lanes that stopped on an error no requestor is told to retry. */
  readonly broken: string[] = [];
  private running = true;
  private readonly lanes: Array<Promise<void>> = [];

  private constructor() {}

  /** Starts two lanes per front (one per era) and returns at once. */
  static async start(fronts: readonly string[]): Promise<TaskLoad> {
    const load = new TaskLoad();
    for (const front of fronts) {
      const legacy = await PlainJsonClient.connect(front, {});
      const kept = (lane: Promise<void>): Promise<void> => lane.catch((error: unknown) => void load.broken.push(String(error)));
      load.lanes.push(kept(load.lane2025(legacy)), kept(load.lane2026(front)));
    }
    return load;
  }

  /**
   * Stops starting tasks and lets every task in flight end; a lane still busy after `timeoutMs`
   * (a task that never ends, a request never answered) is recorded in `broken` instead of hanging
   * the test.
   */
  async stop(timeoutMs = 30_000): Promise<void> {
    this.running = false;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.broken.push(`a lane was still waiting for its task ${timeoutMs} ms after the load stopped`);
        resolve();
      }, timeoutMs);
    });
    await Promise.race([Promise.all(this.lanes), late]);
    clearTimeout(timer);
  }

  /** How many tasks have ended so far. */
  get count(): number {
    return this.ended.length;
  }

  private async lane2026(front: string): Promise<void> {
    while (this.running) {
      const ms = 50 + Math.floor(Math.random() * 250);
      const created = await this.retry2026(front, "tools/call", { name: "sleep", arguments: { ms } });
      if (created["resultType"] !== "task") {
        this.ended.push({ era: "2026-07-28", taskId: "(inline)", status: "completed" });
        continue;
      }
      const taskId = String(created["taskId"]);
      for (;;) {
        const task = await this.retry2026(front, "tasks/get", { taskId });
        if (isTerminal(task)) {
          this.ended.push({
            era: "2026-07-28",
            taskId,
            status: String(task["status"]),
            statusMessage: task["statusMessage"] as string | undefined,
          });
          break;
        }
        await pause(50);
      }
    }
  }

  private async lane2025(client: PlainJsonClient): Promise<void> {
    while (this.running) {
      const ms = 50 + Math.floor(Math.random() * 250);
      const { task } = await this.retry2025("tools/call", () => callToolAsTask(client, "sleep", { ms }));
      await this.retry2025("tasks/result", () => taskResult(client, task.taskId));
      const final = await this.retry2025("tasks/get", () => getTask(client, task.taskId));
      this.ended.push({ era: "2025-11-25", taskId: task.taskId, status: final.status, statusMessage: final.statusMessage });
    }
  }

  /** One 2026 request, sent again while it fails retryably; any other error is kept and ends the lane's wait with an empty result. */
  private async retry2026(front: string, method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    for (;;) {
      let answer: Awaited<ReturnType<typeof statelessRpc>>;
      try {
        answer = await statelessRpc(front, method, params);
      } catch {
        await pause(100); // the front itself did not answer (it never should here)
        continue;
      }
      const error = answer.body.error;
      if (error) {
        this.errors.push({ era: "2026-07-28", method, code: error.code, message: error.message });
        if (error.code === RETRYABLE["2026-07-28"]) {
          await pause(100);
          continue;
        }
        throw new Error(`${method} answered ${error.code} ${error.message}`);
      }
      return answer.body.result ?? {};
    }
  }

  private async retry2025<T>(method: string, send: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        return await send();
      } catch (error) {
        if (!(error instanceof McpError)) {
          await pause(100);
          continue;
        }
        this.errors.push({ era: "2025-11-25", method, code: error.code, message: error.message });
        if (error.code === RETRYABLE["2025-11-25"]) {
          await pause(100);
          continue;
        }
        throw error;
      }
    }
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
