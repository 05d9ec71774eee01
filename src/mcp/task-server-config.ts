import { DEFAULT_TTL_POLICY, type TtlPolicy } from "../core/ttl-policy.js";
import { DEFAULT_MAX_ACTIVE_PER_OWNER } from "../runtime/limits/quotas.js";
import type { TaskBinding } from "./owner.js";

/** Resolved configuration of a task server; defaults in {@link resolveConfig}. */
export interface TaskServerConfig {
  name: string;
  version: string;
  /** Task support on/off. Off: no `tasks` capability, `params.task` ignored (T-NEW-4). */
  tasks: boolean;
  ttl: TtlPolicy;
  pollIntervalMs: number | null;
  /** Largest `arguments` of a tools/call, as JSON bytes. */
  maxArgumentBytes: number;
  pageSize: number;
  maxActivePerOwner: number;
  /** What tasks are bound to without an authorization context (see {@link TaskBinding}). */
  bind: TaskBinding;
  /**
   * 2026-07-28: how long a `tools/call` of a `taskSupport: "optional"` tool waits for its task
   * before it answers with the CreateTaskResult instead of the result (0: never waits).
   */
  inlineWaitMs: number;
  /**
   * The fallback for clients that declared no task support (docs/hosts/README.md): how
   * long a plain call of a task-capable tool waits for its task before it answers that the work
   * goes on in the background; null switches the fallback off (strict spec behaviour).
   */
  backgroundAfterMs: number | null;
  /**
   * Fallback: whether a `taskSupport: "required"` tool runs for such clients too. Off by default:
   * both revisions say a plain call of a required tool is refused (T-TOOL-4: -32601; X-CAP-6:
   * -32021), and in 2025-11-25 a client that declares nothing may still be task-aware (the SDK's
   * Client and our CLI declare no `capabilities.tasks`), so the refusal it is owed cannot be told
   * apart from the fallback a task-less host wants.
   */
  fallbackRequired: boolean;
  /** Fallback: longest a `task_result` call waits for the task before it answers with its status. */
  taskResultWaitMs: number;
  /** Fallback: how often a waiting plain call with a progressToken gets keep-alive progress. */
  keepAliveMs: number;
}

/** Default of {@link TaskServerConfig.inlineWaitMs}: short enough that a client hardly notices the wait. */
export const DEFAULT_INLINE_WAIT_MS = 250;

/**
 * Default of {@link TaskServerConfig.backgroundAfterMs}: below the shortest common host timeout we
 * know of (docs/hosts/README.md), so the host gets an answer before it gives up.
 */
export const DEFAULT_BACKGROUND_AFTER_MS = 10_000;
/** Default of {@link TaskServerConfig.taskResultWaitMs}: under the same host timeouts, with room. */
export const DEFAULT_TASK_RESULT_WAIT_MS = 25_000;
/** Default of {@link TaskServerConfig.keepAliveMs}. */
export const DEFAULT_KEEP_ALIVE_MS = 5_000;

export const DEFAULT_MAX_ARGUMENT_BYTES = 1024 * 1024;

/** The configuration `options` describe, every default filled in (docs/limits.md). */
export function resolveConfig(
  options: Pick<TaskServerConfig, "name" | "version"> &
    Partial<Omit<TaskServerConfig, "name" | "version" | "ttl">> & { ttl?: Partial<TtlPolicy> },
): TaskServerConfig {
  return {
    name: options.name,
    version: options.version,
    tasks: options.tasks ?? true,
    ttl: { ...DEFAULT_TTL_POLICY, ...options.ttl },
    pollIntervalMs: options.pollIntervalMs === undefined ? 1000 : options.pollIntervalMs,
    maxArgumentBytes: options.maxArgumentBytes ?? DEFAULT_MAX_ARGUMENT_BYTES,
    pageSize: options.pageSize ?? 50,
    maxActivePerOwner: options.maxActivePerOwner ?? DEFAULT_MAX_ACTIVE_PER_OWNER,
    bind: options.bind ?? "owner",
    inlineWaitMs: options.inlineWaitMs ?? DEFAULT_INLINE_WAIT_MS,
    backgroundAfterMs: options.backgroundAfterMs === undefined ? DEFAULT_BACKGROUND_AFTER_MS : options.backgroundAfterMs,
    fallbackRequired: options.fallbackRequired ?? false,
    taskResultWaitMs: options.taskResultWaitMs ?? DEFAULT_TASK_RESULT_WAIT_MS,
    keepAliveMs: options.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS,
  };
}
