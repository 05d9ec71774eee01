/** What a credential in a log line is replaced by. */
export const CENSORED = "[redacted]";

/** Fields named for a credential: censored at the top of a line and one level down. */
const CREDENTIAL_FIELDS = ["authorization", "token", "accessToken"] as const;

/** Request headers that carry credentials, in a `headers` object at the top of a line or one level down. */
const CREDENTIAL_HEADERS = ["authorization", "cookie"] as const;

type Fields = Record<string, unknown>;

/**
 * A log line's fields with its credentials censored: a field named `authorization`, `token` or
 * `accessToken` at the top of the line or in one of its objects (`err.token`), and the
 * `authorization` and `cookie` headers of a `headers` object at the top or in one of its objects
 * (an error carrying its request: `err.headers`, `req.headers`). Tokens are never logged on
 * purpose; this catches the accidents. Copies only what it changes (an error stays an error of
 * its class), so the caller's objects are never written to.
 *
 * The same rules as pino's redact paths `token`, `*.token`, `headers.authorization`,
 * `*.headers.authorization`, …, done in the line formatter: a path starting with `*` makes pino
 * run its redactor on every field of every line, strings included, which cost several times the
 * rest of writing an audit line; here a line of plain values is looked at once and passed on as is.
 */
export function censorCredentials(line: Fields): Fields {
  let censored: Fields | null = null;
  for (const key of Object.keys(line)) {
    const value = line[key];
    const replaced = isCredentialField(key)
      ? CENSORED
      : typeof value === "object" && value !== null
        ? censorWithin(value as Fields, key === "headers")
        : value;
    if (replaced === value || value === undefined) continue;
    censored ??= { ...line };
    censored[key] = replaced;
  }
  return censored ?? line;
}

/** `value` (a field of the line) with its credential fields, and the credential headers of its `headers`, censored. */
function censorWithin(value: Fields, isHeaders: boolean): Fields {
  let copy: Fields | null = null;
  const censor = (key: string, replacement: unknown): void => {
    copy ??= copyOf(value);
    copy[key] = replacement;
  };
  for (const key of CREDENTIAL_FIELDS) if (Object.hasOwn(value, key) && value[key] !== undefined) censor(key, CENSORED);
  if (isHeaders) {
    for (const key of CREDENTIAL_HEADERS) if (Object.hasOwn(value, key) && value[key] !== undefined) censor(key, CENSORED);
  } else if (Object.hasOwn(value, "headers") && typeof value["headers"] === "object" && value["headers"] !== null) {
    const headers = value["headers"] as Fields;
    const cleaned = censorWithin(headers, true);
    if (cleaned !== headers) censor("headers", cleaned);
  }
  return copy ?? value;
}

/** A copy with the same own properties (and, for an error, the same class, message and stack). */
function copyOf(value: Fields): Fields {
  if (Array.isArray(value)) return Object.assign([], value) as unknown as Fields;
  const copy = Object.create(Object.getPrototypeOf(value) as object | null, Object.getOwnPropertyDescriptors(value)) as Fields;
  // From Node 22 an error's `stack` is an accessor reading the original's hidden state, which a
  // copy of the descriptor does not carry: the copy holds the text itself.
  if (value instanceof Error)
    Object.defineProperty(copy, "stack", { value: value.stack, writable: true, configurable: true, enumerable: false });
  return copy;
}

function isCredentialField(key: string): boolean {
  return (CREDENTIAL_FIELDS as readonly string[]).includes(key);
}
