import type { OAuthProtectedResourceMetadata } from "@modelcontextprotocol/sdk/shared/auth.js";
import { sendJson } from "../json-rpc-response.js";
import type { HttpRoute } from "../route-table.js";

/** What the protected-resource metadata document (RFC 9728) says about this server. */
export interface ProtectedResourceOptions {
  /** The resource identifier (the MCP endpoint's public URL); default: the listen URL. */
  resource?: string;
  /** Authorization servers whose tokens this server accepts (for a JWT verifier: its issuer). */
  authorizationServers: readonly string[];
  /** Scopes to advertise (the required ones). */
  scopesSupported?: readonly string[];
}

const WELL_KNOWN = "/.well-known/oauth-protected-resource";

/**
 * Where a client finds the metadata of `resource` (RFC 9728 §3.1: the well-known segment goes
 * between the origin and the resource's path). Ours, not the SDK's `getOAuthProtectedResourceMetadataUrl`,
 * because that module loads express and its OAuth server router.
 */
export function protectedResourceMetadataUrl(resource: string): string {
  const url = new URL(resource);
  const suffix = url.pathname !== "/" ? url.pathname : "";
  return new URL(`${WELL_KNOWN}${suffix}`, url.origin).href;
}

/** The metadata document's body. */
export function protectedResourceMetadata(resource: string, options: ProtectedResourceOptions): OAuthProtectedResourceMetadata {
  return {
    resource,
    authorization_servers: [...options.authorizationServers],
    ...(options.scopesSupported && options.scopesSupported.length > 0 && { scopes_supported: [...options.scopesSupported] }),
    bearer_methods_supported: ["header"],
  };
}

/**
 * `GET /.well-known/oauth-protected-resource` and its path-suffixed forms (for `endpointPath`,
 * and for the resource URL's path when it differs, e.g. behind a proxy). `resource()` is read per
 * request because the default depends on the port picked at listen time.
 */
export function protectedResourceRoutes(endpointPath: string, resource: () => string, options: ProtectedResourceOptions): HttpRoute[] {
  const paths = new Set([WELL_KNOWN, `${WELL_KNOWN}${endpointPath}`]);
  if (options.resource !== undefined) paths.add(new URL(protectedResourceMetadataUrl(options.resource)).pathname);
  // Public and cacheable: discovery happens before a client holds any token, possibly from a browser.
  const headers = { "access-control-allow-origin": "*", "cache-control": "max-age=3600" };
  return [...paths].map((path) => ({
    path,
    methods: { GET: (_req, res) => sendJson(res, 200, protectedResourceMetadata(resource(), options), headers) },
  }));
}
