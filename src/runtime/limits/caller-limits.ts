import { allowanceKey, type Caller } from "../../core/caller.js";
import { TaskError } from "../../core/errors.js";
import type { EngineObserver, LimitName } from "../engine-observer.js";
import type { EngineOperation } from "../engine-operation.js";
import { DEFAULT_FAILED_LOOKUP_LIMIT, FailedLookupGuard, type FailedLookupLimit } from "./failed-lookup-guard.js";
import type { Logger } from "../../core/logger.js";
import { RateLimiter, type RateLimit } from "./rate-limiter.js";

/** Task operations per owner (anonymous callers: per address): 100/s sustained, bursts of 200. */
export const DEFAULT_OPERATION_RATE: RateLimit = { perSecond: 100, burst: 200 };

/** The per-caller limits of T-SEC-4, each on by default, each switched off with "off". */
export interface CallerLimitOptions {
  /** Task operations (create, get, result, list, cancel) per caller. Default 100 per second with bursts of 200. */
  rateLimit?: RateLimit | "off";
  /** Failed lookups per caller (a principal; without one, an address), then a cool-down. Default 20 a minute, then a 60 s cool-down. */
  failedLookups?: Partial<FailedLookupLimit> | "off";
}

/** A task operation being attempted: who, which operation, on which task (when it names one). */
export interface Attempt {
  caller: Caller;
  operation: EngineOperation;
  taskId?: unknown;
}

/**
 * The engine's per-caller limits (T-SEC-4): a token bucket of task operations, and the failed
 * lookup guard against id enumeration. A refusal is a `rate_limited` TaskError (-32029 with
 * `retryAfterMs`), counted in the metrics each time and audit-logged once per episode (the first
 * refusal after an allowed operation, the start of a cool-down): a client hammering a closed door
 * would otherwise flood the log it is meant to be found in.
 */
export class CallerLimits {
  private readonly operations: RateLimiter | null;
  private readonly operationRate: number;
  private readonly lookups: FailedLookupGuard | null;

  constructor(
    options: CallerLimitOptions,
    private readonly deps: { now: () => number; observer: EngineObserver; logger: Logger },
  ) {
    const rate = options.rateLimit ?? DEFAULT_OPERATION_RATE;
    this.operations = rate === "off" ? null : new RateLimiter(rate, deps.now);
    this.operationRate = rate === "off" ? 0 : rate.perSecond;
    const lookups = options.failedLookups ?? {};
    this.lookups = lookups === "off" ? null : new FailedLookupGuard({ ...DEFAULT_FAILED_LOOKUP_LIMIT, ...lookups }, deps.now);
  }

  /** @throws TaskError rate_limited when the caller is over its operation rate. */
  admit(attempt: Attempt): void {
    const decision = this.operations?.take(allowanceKey(attempt.caller));
    if (decision && !decision.allowed) this.refuse("task_operations", this.operationRate, decision.retryAfterMs, decision.first, attempt);
  }

  /**
   * Gives back the operation token of an attempt that was handed on unanswered to another path,
   * which takes its own (a plain `tasks/result` that needs a stream): one request, one token.
   */
  handedOn(attempt: Attempt): void {
    this.operations?.giveBack(allowanceKey(attempt.caller));
  }

  /**
   * Lets a lookup go ahead while its caller may make one. A caller cooling down after too many
   * failed lookups is refused at once when it is bound to nobody: any task it could find is one
   * it reaches by the id alone, which is what an enumeration looks for. A caller with an owner (a
   * principal, a session) can find only its own tasks, so its lookups go ahead and only those
   * that fail are refused ({@link lookupFailed}): the guard never keeps a caller from its own tasks.
   * @throws TaskError rate_limited
   */
  admitLookup(attempt: Attempt): void {
    if (attempt.caller.owner !== null) return;
    this.refuseWhileCooling(attempt);
  }

  /**
   * Counts a failed lookup of a caller not cooling down ({@link refuseWhileCooling} first).
   * @throws TaskError rate_limited when this one went over the allowance (its cool-down starts now).
   */
  lookupFailed(attempt: Attempt): void {
    const block = this.lookups?.fail(attempt.caller);
    if (block) this.refuse("failed_lookups", block.limit, block.retryAfterMs, true, attempt);
  }

  /**
   * Refuses a caller cooling down after too many failed lookups: the answer to each lookup it
   * makes meanwhile that fails, without counting it again (the cool-down is not extended, nor
   * audited again).
   * @throws TaskError rate_limited
   */
  refuseWhileCooling(attempt: Attempt): void {
    const block = this.lookups?.check(attempt.caller);
    if (block) this.refuse("failed_lookups", block.limit, block.retryAfterMs, false, attempt);
  }

  private refuse(limit: LimitName, allowance: number, retryAfterMs: number, audit: boolean, attempt: Attempt): never {
    this.deps.observer.limitRejected(limit);
    if (audit) {
      const { caller, operation, taskId } = attempt;
      this.deps.logger.warn(
        {
          audit: "limit_hit",
          limit,
          owner: caller.owner,
          peer: caller.peer ?? null,
          operation,
          taskId: typeof taskId === "string" ? taskId : null,
          retryAfterMs,
        },
        `limit hit: ${limit}`,
      );
    }
    throw TaskError.rateLimited(limit, allowance, retryAfterMs);
  }
}
