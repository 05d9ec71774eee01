import type { ToolContext } from "../mcp/tool-definition.js";

/**
 * Upstream task ids remembered per connection after their follow ended (about 100 bytes each): an
 * upstream that hands a finished task's id to a later call is still caught, within this bound.
 */
const REMEMBERED_TASKS = 10_000;

/**
 * Which gateway call follows which upstream task, on one upstream connection. An upstream task id
 * is bound to one call for good: a second call the upstream answers with the same id is refused
 * ({@link bind} returns null), never re-bound, so the upstream's questions, status and result for
 * that task reach only the call that created it. The first call is the gateway task (its id, so a
 * follow resumed after a restart or a lost connection binds again), or the call itself for a
 * plain call.
 */
export class UpstreamTaskBindings {
  /** Follows in flight, by upstream task id: the upstream's questions naming the task go to them. */
  private readonly following = new Map<string, ToolContext>();
  /** Who each upstream task id was given to, in flight or ended (the oldest ended forgotten first). */
  private readonly claimed = new Map<string, string | ToolContext>();

  /**
   * Binds `upstreamTaskId` to `ctx`; returns the undo (the follow ended), or null when the id is
   * another call's: the upstream gave one task to two calls.
   */
  bind(upstreamTaskId: string, ctx: ToolContext): (() => void) | null {
    const caller = ctx.taskId ?? ctx;
    const holder = this.claimed.get(upstreamTaskId);
    if (holder !== undefined && holder !== caller) return null;
    this.claimed.delete(upstreamTaskId);
    this.claimed.set(upstreamTaskId, caller);
    this.following.set(upstreamTaskId, ctx);
    this.forgetOldest();
    return () => {
      if (this.following.get(upstreamTaskId) === ctx) this.following.delete(upstreamTaskId);
    };
  }

  /** The call following `upstreamTaskId` now, if any. */
  follower(upstreamTaskId: string): ToolContext | undefined {
    return this.following.get(upstreamTaskId);
  }

  /**
   * A new upstream connection (a restarted process may hand out its ids anew): only the ids of the
   * follows in flight stay claimed; they re-attach to the same upstream task.
   */
  reconnected(): void {
    for (const id of [...this.claimed.keys()]) if (!this.following.has(id)) this.claimed.delete(id);
  }

  private forgetOldest(): void {
    if (this.claimed.size <= REMEMBERED_TASKS) return;
    for (const id of this.claimed.keys()) {
      if (this.claimed.size <= REMEMBERED_TASKS) return;
      if (!this.following.has(id)) this.claimed.delete(id);
    }
  }
}
