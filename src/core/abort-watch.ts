/** What hears an {@link AbortWatch}'s abort: an object with `handleEvent`, or a function. */
export type AbortListener = { handleEvent(): void } | (() => void);

/**
 * What a long wait listens to for its request's end. An `AbortSignal` is one; so is the lighter
 * `LazyAbort` of the HTTP endpoints, which keeps its listeners in a field instead of an
 * `EventTarget` (its maps, a listener record and a closure per listener: about 0.7 KB of heap for
 * every request that waits, thousands at once).
 */
export interface AbortWatch {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: "abort", listener: AbortListener): void;
  removeEventListener(type: "abort", listener: AbortListener): void;
}
