import type { Caller } from "../../core/caller.js";

/** What a resource, prompt or completion handler gets besides its arguments. */
export interface FeatureContext {
  /** Aborts when the requestor gives up (cancels the request, hangs up). */
  readonly signal: AbortSignal;
  /** Who asks: the owner key of the authorization context (null without one), and the peer. */
  readonly caller: Caller;
}
