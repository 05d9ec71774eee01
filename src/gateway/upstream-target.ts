/** Where the gateway's upstream MCP server is: a command it starts (stdio), or a URL (Streamable HTTP). */
export type UpstreamTarget =
  | { kind: "stdio"; command: string; args: string[] }
  | {
      kind: "url";
      url: URL;
      /** Sent with every request (the upstream's credentials): never logged, never shown. */
      headers: Record<string, string>;
    };

/**
 * Splits a command line into words as a POSIX shell would for plain words, quotes ('…', "…")
 * and backslash escapes; nothing is expanded and no shell runs it.
 */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line.charAt(i);
    if (quote) {
      if (c === quote) quote = null;
      else if (c === "\\" && quote === '"' && i + 1 < line.length) word += line.charAt(++i);
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      word ??= "";
    } else if (c === "\\" && i + 1 < line.length) {
      word = (word ?? "") + line.charAt(++i);
    } else if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else {
      word = (word ?? "") + c;
    }
  }
  if (quote) throw new Error(`unbalanced ${quote} in the upstream command`);
  if (word !== null) words.push(word);
  return words;
}

/** A `Name: value` header flag as a pair; the value is not echoed in the error (it may be a secret). */
export function parseHeader(flag: string): [string, string] {
  const colon = flag.indexOf(":");
  const name = colon > 0 ? flag.slice(0, colon).trim() : "";
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new Error('--upstream-header must be "Name: value"');
  return [name, flag.slice(colon + 1).trim()];
}

/**
 * The upstream as logs and errors may name it: the command's program (its arguments may carry
 * secrets), or the URL's origin and path (no query, no user info); headers never.
 */
export function describeUpstream(target: UpstreamTarget): string {
  if (target.kind === "stdio") return `stdio:${target.command}`;
  return `${target.url.origin}${target.url.pathname}`;
}
