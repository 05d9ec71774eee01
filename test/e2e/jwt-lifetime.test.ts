/**
 * The lifetime a JWT access token may claim: `exp` is required (RFC 9068 §2.2), and `exp` may lie
 * at most the maximum lifetime (default 24 h) after `iat`, and after now whatever `iat` says.
 * Authentication comes before the protocol era is chosen, so every case runs on /mcp in both eras
 * (a 2025-11-25 initialize, a 2026-07-28 request), with real keys served as a JWKS on loopback.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportSPKI, generateKeyPair, SignJWT, type CryptoKey } from "jose";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { jwtVerifier, type JwtVerifierOptions } from "../../src/http/auth/jwt-verifier.js";
import { CliProcess, killAll } from "../support/cli-process.js";
import { rawPost, startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { startJwks, type JwksIssuer } from "../support/jwks.js";
import { statelessRpc } from "../support/stateless-client.js";

const ISSUER = "https://issuer.test";
const AUDIENCE = "mcp-tasks-lifetime";
const KID = "key-1";
const HOUR = 3600;
const DAY = 24 * HOUR;

let signing: CryptoKey;
let jwksUrl: string;
let issuer: JwksIssuer;

beforeAll(async () => {
  issuer = await startJwks(KID);
  ({ signing, url: jwksUrl } = issuer);
});

afterAll(() => issuer.close());

let fx: HttpServerFixture | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await fx?.close();
  fx = undefined;
  await killAll();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const now = (): number => Math.floor(Date.now() / 1000);

/** A token for alice with exactly the time claims given (absent: not in the token). */
function mint(times: { iat?: number; exp?: number }, key: CryptoKey = signing, alg = "ES256"): Promise<string> {
  const jwt = new SignJWT({})
    .setProtectedHeader({ alg, kid: KID, typ: "at+jwt" })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject("alice");
  if (times.iat !== undefined) jwt.setIssuedAt(times.iat);
  if (times.exp !== undefined) jwt.setExpirationTime(times.exp);
  return jwt.sign(key);
}

function start(verifier: Partial<JwtVerifierOptions> = {}): Promise<HttpServerFixture> {
  return startHttpServer({
    http: {
      verifier: jwtVerifier({ jwksUrl, issuer: ISSUER, audience: AUDIENCE, ...verifier } as JwtVerifierOptions),
      protectedResource: { authorizationServers: [ISSUER] },
    },
  });
}

interface Answer {
  status: number;
  challenge: Record<string, string>;
}

function challengeOf(headers: Headers): Record<string, string> {
  const header = headers.get("www-authenticate") ?? "";
  return Object.fromEntries([...header.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1] as string, m[2] as string]));
}

/** A 2025-11-25 initialize carrying `token`. */
async function initializeWith(url: URL, token: string): Promise<Answer> {
  const initialize = {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
  };
  const res = await rawPost(url, initialize, { authorization: `Bearer ${token}` });
  return { status: res.status, challenge: challengeOf(res.headers) };
}

/** A 2026-07-28 tools/list carrying `token`. */
async function listToolsWith(url: URL, token: string): Promise<Answer> {
  const res = await statelessRpc(url, "tools/list", {}, { token });
  return { status: res.status, challenge: challengeOf(res.headers) };
}

/** One request on /mcp in each protocol era. */
const ERAS: readonly { era: string; send(url: URL, token: string): Promise<Answer> }[] = [
  { era: "2025-11-25", send: initializeWith },
  { era: "2026-07-28", send: listToolsWith },
];

const NO_EXP = "the token has no expiration time (exp)";
const tooLong = (max: number): string => `the token's lifetime exceeds the ${max} s this server accepts`;

/** Token claims, the verifier's options, and the description of the refusal (null: accepted). */
const CASES: readonly {
  name: string;
  times: () => { iat?: number; exp?: number };
  options?: Partial<JwtVerifierOptions>;
  refused: string | null;
}[] = [
  { name: "refuses a token without exp", times: () => ({ iat: now() }), refused: NO_EXP },
  { name: "refuses a token with neither exp nor iat", times: () => ({}), refused: NO_EXP },
  {
    name: "refuses a token whose exp is 175 years after its iat",
    times: () => ({ iat: now(), exp: now() + 175 * 365 * DAY }),
    refused: tooLong(DAY),
  },
  {
    name: "refuses a token without iat whose exp is 175 years from now",
    times: () => ({ exp: now() + 175 * 365 * DAY }),
    refused: tooLong(DAY),
  },
  {
    name: "refuses a token whose iat lies in the future to stretch its exp past the maximum from now",
    times: () => ({ iat: now() + 10 * DAY, exp: now() + 10 * DAY + HOUR }),
    refused: tooLong(DAY),
  },
  {
    name: "refuses a token living one second more than the maximum from its iat",
    times: () => ({ iat: now() - 60, exp: now() - 60 + DAY + 1 }),
    refused: tooLong(DAY),
  },
  {
    name: "accepts a token living exactly the default maximum of 24 h from its iat",
    times: () => ({ iat: now() - 60, exp: now() - 60 + DAY }),
    refused: null,
  },
  { name: "accepts a token without iat whose exp is within the maximum from now", times: () => ({ exp: now() + DAY }), refused: null },
  {
    name: "refuses a 2 h token under a configured maximum of 1 h",
    times: () => ({ iat: now(), exp: now() + 2 * HOUR }),
    options: { maxLifetimeSec: HOUR },
    refused: tooLong(HOUR),
  },
  {
    name: "accepts a 2-day token under a configured maximum of 3 days",
    times: () => ({ iat: now(), exp: now() + 2 * DAY }),
    options: { maxLifetimeSec: 3 * DAY },
    refused: null,
  },
];

describe.each(ERAS)("JWT access token lifetime on /mcp ($era)", ({ send }) => {
  it.each(CASES)("$name", async ({ times, options, refused }) => {
    fx = await start(options);
    const { status, challenge } = await send(fx.url, await mint(times()));
    if (refused === null) {
      expect(status).toBe(200);
      return;
    }
    expect(status).toBe(401);
    expect(challenge).toMatchObject({ error: "invalid_token", error_description: refused });
  });
});

describe("serve --jwt-max-lifetime (CLI)", { timeout: 60_000 }, () => {
  it("refuses a token living longer than --jwt-max-lifetime seconds and accepts one within it", async () => {
    const pair = await generateKeyPair("RS256");
    const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-jwt-lifetime-"));
    dirs.push(dir);
    const keyFile = join(dir, "issuer.pem");
    writeFileSync(keyFile, await exportSPKI(pair.publicKey));
    const server = CliProcess.spawn([
      "serve",
      "--demo",
      "--store",
      "memory",
      "--port",
      "0",
      "--jwt-issuer",
      ISSUER,
      "--jwt-audience",
      AUDIENCE,
      "--jwt-public-key",
      keyFile,
      "--jwt-max-lifetime",
      "600",
    ]);
    const url = new URL(await server.url());
    const refused = await initializeWith(url, await mint({ iat: now(), exp: now() + 601 }, pair.privateKey, "RS256"));
    expect(refused.status).toBe(401);
    expect(refused.challenge).toMatchObject({ error: "invalid_token", error_description: tooLong(600) });
    expect((await initializeWith(url, await mint({ iat: now(), exp: now() + 600 }, pair.privateKey, "RS256"))).status).toBe(200);
  });
});
