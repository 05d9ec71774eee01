/**
 * When a failed delivery is tried again: exponential back-off with jitter (each wait twice the
 * last, then a random part of it taken off, so receivers coming back are not hit by every
 * sender at once), until the event is older than the retry window; then it is dead-lettered.
 */
export interface RetryRules {
  firstRetryDelayMs: number;
  maxRetryDelayMs: number;
  retryWindowMs: number;
}

/** The next attempt after the `attempts`-th failed one (1 = the first), or null when the window is over. */
export function nextAttemptAt(rules: RetryRules, attempts: number, eventAt: number, now: number, random = Math.random): number | null {
  const exponent = Math.min(Math.max(0, attempts - 1), 30);
  const ceiling = Math.min(rules.maxRetryDelayMs, rules.firstRetryDelayMs * 2 ** exponent);
  const delay = Math.round(ceiling * (0.5 + 0.5 * random()));
  const next = now + delay;
  return next > eventAt + rules.retryWindowMs ? null : next;
}
