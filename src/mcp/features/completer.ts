import type { FeatureContext } from "./feature-context.js";

/** What a completer knows: the text typed so far, and the other arguments already chosen. */
export interface CompletionContext extends FeatureContext {
  /** Values of the prompt's other arguments (or the template's other variables) the client sent. */
  readonly arguments: Readonly<Record<string, string>>;
}

/**
 * Suggestions: the values (at most 100 go out, as the spec allows; more set `hasMore`), and
 * optionally how many there are in all and whether more exist than were given.
 */
export type CompletionAnswer = string[] | { values: string[]; total?: number; hasMore?: boolean };

/** Suggests values for one prompt argument or template variable, given what was typed (`value`). */
export type Completer = (value: string, ctx: CompletionContext) => CompletionAnswer | Promise<CompletionAnswer>;

/** MCP: a `completion/complete` result holds at most 100 values. */
export const MAX_COMPLETION_VALUES = 100;

/** A completer's answer as the `completion` of a CompleteResult, cut to 100 values. */
export function completionOf(answer: CompletionAnswer): { values: string[]; total?: number; hasMore: boolean } {
  const { values, total, hasMore } = Array.isArray(answer) ? { values: answer, total: undefined, hasMore: undefined } : answer;
  const cut = values.length > MAX_COMPLETION_VALUES;
  return {
    values: values.slice(0, MAX_COMPLETION_VALUES),
    ...((total !== undefined || cut) && { total: total ?? values.length }),
    hasMore: hasMore ?? cut,
  };
}
