import { readFileSync } from "node:fs";

/** What a token grants: the principal it authenticates, and whether that principal is an admin of the web view. */
export interface TokenGrant {
  principal: string;
  /** May see and cancel every owner's tasks in the web view (/tasks). MCP requests are unaffected. */
  admin: boolean;
}

const FORMAT = '{"<token>": "<principal>"} or {"<token>": {"principal": "<principal>", "admin": true}}';

/**
 * Development bearer tokens: a JSON object mapping each token to its principal, either as a plain
 * string or as `{"principal": "...", "admin": true}` to make that principal an admin of the web
 * view. For production, put a real verifier (JWT/JWKS) in front; the owner key then comes from
 * issuer + subject, and admin from the `mcp-tasks:admin` scope.
 *
 * @throws Error naming the file and the accepted format when it cannot be read or is malformed.
 */
export function loadTokenFile(path: string): Map<string, TokenGrant> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new Error(`Cannot read the auth token file ${path}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new Error(`The auth token file ${path} must hold a JSON object ${FORMAT}`);
  }
  const tokens = new Map<string, TokenGrant>();
  for (const [token, value] of Object.entries(parsed)) {
    const grant = grantOf(value);
    if (grant === null || token.length === 0) {
      throw new Error(
        `The auth token file ${path} maps every token to a non-empty principal string, or to {"principal": "<principal>", "admin": true}`,
      );
    }
    tokens.set(token, grant);
  }
  return tokens;
}

function grantOf(value: unknown): TokenGrant | null {
  if (typeof value === "string") return value.length > 0 ? { principal: value, admin: false } : null;
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const entry = value as Record<string, unknown>;
  // Unknown keys are refused: a misspelt "admin" must not silently leave someone without access.
  if (Object.keys(entry).some((key) => key !== "principal" && key !== "admin")) return null;
  const { principal, admin } = entry;
  if (typeof principal !== "string" || principal.length === 0) return null;
  if (admin !== undefined && typeof admin !== "boolean") return null;
  return { principal, admin: admin === true };
}
