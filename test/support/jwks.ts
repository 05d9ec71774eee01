import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type CryptoKey } from "jose";

/** An ES256 signing key and its public half served as a JWKS on loopback, as an issuer serves it. */
export interface JwksIssuer {
  signing: CryptoKey;
  publicJwk: Record<string, unknown>;
  /** The JWKS document's URL. */
  url: string;
  close(): Promise<void>;
}

export async function startJwks(kid: string): Promise<JwksIssuer> {
  const pair = await generateKeyPair("ES256", { extractable: true });
  const publicJwk = { ...(await exportJWK(pair.publicKey)), kid, alg: "ES256", use: "sig" };
  const server = createServer((_req, res) =>
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: [publicJwk] })),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    signing: pair.privateKey,
    publicJwk,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
