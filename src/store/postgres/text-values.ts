/**
 * PostgreSQL text cannot hold U+0000: a bound value containing it fails the whole statement
 * ("invalid byte sequence for encoding UTF8: 0x00"), while a requestor's JSON strings may carry it
 * (a task id, a tool's status message). Such values are bound with U+FFFD in its place, so a
 * lookup by such an id finds nothing — no stored text can contain U+0000 — instead of failing
 * with an internal error, and a status message quoting one is stored instead of failing its
 * transition. JSON payloads are unaffected: they are bound as JSON text, where it is `\u0000`.
 */
export function boundText(values: readonly unknown[]): unknown[] {
  return values.map((value) => (Array.isArray(value) ? value.map(withoutNul) : withoutNul(value)));
}

function withoutNul(value: unknown): unknown {
  return typeof value === "string" && value.includes("\u0000") ? value.replaceAll("\u0000", "\uFFFD") : value;
}
