import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { RpcCode, TaskError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { ToolContext } from "../mcp/tool-definition.js";
import { UpstreamConnection, type UpstreamCallOptions, type UpstreamOptions } from "./upstream-connection.js";
import type { UpstreamTarget } from "./upstream-target.js";

/** What runs an upstream tool call for a requestor: the shared connection, or a pool of per-principal ones. */
export interface UpstreamCaller {
  callTool(name: string, args: Record<string, unknown>, ctx: ToolContext, options?: UpstreamCallOptions): Promise<CallToolResult>;
}

/** Bounds of the per-principal pool. */
export interface PerPrincipalOptions {
  /** Upstream processes at most at once (besides the gateway's own, which lists and reads). */
  maxUpstreams: number;
  /** A principal's process with no call in flight for this long (ms) is ended. */
  idleMs: number;
}

export const DEFAULT_MAX_UPSTREAMS = 16;
export const DEFAULT_UPSTREAM_IDLE_MS = 300_000;

interface Member {
  connection: UpstreamConnection;
  started: Promise<void>;
  inFlight: number;
  lastUsed: number;
  idleTimer: NodeJS.Timeout | null;
}

/** The pool key of a principal; every caller bound to nobody shares one (they cannot be told apart). */
function keyOf(owner: string | null): string {
  return owner === null ? "anonymous" : `owner:${owner}`;
}

/**
 * One stdio upstream process per principal (`--upstream-per-principal`): a principal's calls, and
 * so the elicitation and sampling requests their upstream sends, run in a process no other
 * principal's call reaches. The shared connection can only relay a question while exactly one call
 * is in flight (it cannot tell whose call asks); here that rule applies per principal, so two
 * principals' questions no longer block each other. Bounded: a process idle for `idleMs` is ended,
 * and at `maxUpstreams` the least recently used idle one makes room — when every one is busy the
 * call fails with a clear message rather than sharing a process.
 */
export class UpstreamPool implements UpstreamCaller {
  private readonly members = new Map<string, Member>();
  private closing = false;

  constructor(
    private readonly target: UpstreamTarget,
    private readonly options: UpstreamOptions,
    private readonly bounds: PerPrincipalOptions,
    private readonly logger: Logger,
  ) {}

  /** Principals with a process now (for tests and the log). */
  get size(): number {
    return this.members.size;
  }

  async callTool(name: string, args: Record<string, unknown>, ctx: ToolContext, options?: UpstreamCallOptions): Promise<CallToolResult> {
    const key = keyOf(ctx.owner);
    const member = this.acquire(key);
    try {
      await member.started;
      return await member.connection.callTool(name, args, ctx, options);
    } finally {
      this.release(key, member);
    }
  }

  /** The principal's member, started when it has none; counts the call in. */
  private acquire(key: string): Member {
    if (this.closing) throw TaskError.protocol(RpcCode.InternalError, "The gateway is shutting down");
    let member = this.members.get(key);
    if (!member) {
      if (this.members.size >= this.bounds.maxUpstreams) this.evictIdle();
      member = this.start(key);
    }
    if (member.idleTimer) clearTimeout(member.idleTimer);
    member.idleTimer = null;
    member.inFlight++;
    member.lastUsed = Date.now();
    return member;
  }

  private release(key: string, member: Member): void {
    member.inFlight--;
    member.lastUsed = Date.now();
    if (member.inFlight > 0 || this.members.get(key) !== member) return;
    member.idleTimer = setTimeout(() => this.end(key, member, "idle"), this.bounds.idleMs);
    member.idleTimer.unref();
  }

  private start(key: string): Member {
    const connection = new UpstreamConnection(this.target, this.options);
    const member: Member = { connection, started: Promise.resolve(), inFlight: 0, lastUsed: Date.now(), idleTimer: null };
    // A first start that fails drops the member, so the principal's next call tries afresh.
    member.started = connection.start().then(
      () =>
        this.logger.info(
          { upstream: connection.name, principal: key, upstreams: this.members.size },
          "started an upstream process for a principal",
        ),
      (error: unknown) => {
        if (this.members.get(key) === member) this.members.delete(key);
        void connection.close();
        throw TaskError.protocol(
          RpcCode.InternalError,
          `The upstream server (${connection.name}) could not be started for this principal: ${error instanceof Error ? error.message : String(error)}`,
        );
      },
    );
    this.members.set(key, member);
    return member;
  }

  /** Makes room at the cap by ending the least recently used idle process; none idle → the call fails. */
  private evictIdle(): void {
    let oldest: [string, Member] | undefined;
    for (const entry of this.members) {
      if (entry[1].inFlight > 0) continue;
      if (!oldest || entry[1].lastUsed < oldest[1].lastUsed) oldest = entry;
    }
    if (!oldest) {
      throw TaskError.protocol(
        RpcCode.InternalError,
        `The gateway runs its maximum of ${this.bounds.maxUpstreams} upstream processes (one per principal) and every one is busy; try again later`,
      );
    }
    this.end(oldest[0], oldest[1], "room for another principal");
  }

  private end(key: string, member: Member, why: string): void {
    if (this.members.get(key) !== member) return;
    if (member.idleTimer) clearTimeout(member.idleTimer);
    this.members.delete(key);
    this.logger.info({ upstream: member.connection.name, principal: key, why }, "ended a principal's upstream process");
    void member.connection.close();
  }

  /** Ends every principal's process. */
  async close(): Promise<void> {
    this.closing = true;
    const members = [...this.members.values()];
    this.members.clear();
    for (const member of members) if (member.idleTimer) clearTimeout(member.idleTimer);
    await Promise.all(members.map((member) => member.connection.close()));
  }
}
