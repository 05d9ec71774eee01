import { readFileSync } from "node:fs";

/**
 * Development bearer tokens: a JSON file `{"<token>": "<principal>"}`. For production, put a real
 * verifier (JWT/JWKS) in front; the owner key then comes from issuer + subject.
 */
export function loadTokenFile(path: string): Map<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new Error(`Cannot read the auth token file ${path}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new Error(`The auth token file ${path} must hold a JSON object {"<token>": "<principal>"}`);
  }
  const tokens = new Map<string, string>();
  for (const [token, principal] of Object.entries(parsed)) {
    if (typeof principal !== "string" || principal.length === 0 || token.length === 0) {
      throw new Error(`The auth token file ${path} maps every token to a non-empty principal string`);
    }
    tokens.set(token, principal);
  }
  return tokens;
}
