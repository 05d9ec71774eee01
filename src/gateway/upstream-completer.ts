import type { Completer } from "../mcp/features/completer.js";
import type { UpstreamConnection } from "./upstream-connection.js";

/** What `completion/complete` names: a prompt, or a resource template by its URI template. */
export type CompletionRef = { type: "ref/prompt"; name: string } | { type: "ref/resource"; uri: string };

/** A completer that asks the upstream (`completion/complete`) for one argument of `ref`. */
export function upstreamCompleter(upstream: UpstreamConnection, ref: CompletionRef, argument: string): Completer {
  return async (value, ctx) => {
    const client = await upstream.client();
    const { completion } = await client.complete(
      { ref, argument: { name: argument, value }, context: { arguments: { ...ctx.arguments } } },
      { signal: ctx.signal },
    );
    return {
      values: completion.values,
      ...(completion.total !== undefined && { total: completion.total }),
      ...(completion.hasMore !== undefined && { hasMore: completion.hasMore }),
    };
  };
}
