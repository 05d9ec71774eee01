import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../core/logger.js";
import { sendJson } from "./json-rpc-response.js";
import { HttpFailure } from "./rpc-http-errors.js";

/** What a route handler gets besides the request and response. */
export interface RouteContext {
  url: URL;
  /** Values of the `:name` segments of the route's path, URL-decoded. */
  params: Readonly<Record<string, string>>;
  /** This HTTP request's id (also sent back as `x-request-id`); put it in every log line. */
  requestId: string;
  /** The request's network peer (the trusted proxy's client address behind one), for audit lines. */
  peer: string | undefined;
  logger: Logger;
}

/** Serves one request of an {@link HttpRoute}. */
export type RouteHandler = (req: IncomingMessage, res: ServerResponse, ctx: RouteContext) => Promise<void> | void;

/**
 * One path of the HTTP server beside the MCP endpoint (/healthz, /metrics, the web view…).
 * `path` is matched segment by segment; a segment `:name` matches any one non-empty segment, and a
 * last segment `*name` matches the rest of the path (one or more non-empty segments, joined by "/").
 */
export interface HttpRoute {
  path: string;
  /** Handlers by HTTP method; a HEAD request is answered by the GET handler (Node drops the body). */
  methods: Readonly<Partial<Record<"GET" | "POST" | "PUT" | "DELETE", RouteHandler>>>;
}

interface Compiled {
  route: HttpRoute;
  segments: string[];
}

function segmentsOf(pathname: string): string[] {
  return pathname.split("/").slice(1);
}

/**
 * The extension point of the HTTP server: a list of routes, matched in order. Keeps each feature's
 * paths in its own module instead of one growing request handler.
 */
export class RouteTable {
  private readonly compiled: Compiled[];

  constructor(routes: readonly HttpRoute[]) {
    this.compiled = routes.map((route) => ({ route, segments: segmentsOf(route.path) }));
  }

  /**
   * Answers the request if a route's path matches: with its handler, or 405 when the route has
   * none for the method. False when no route matches (the caller goes on).
   */
  async dispatch(req: IncomingMessage, res: ServerResponse, context: Omit<RouteContext, "params">): Promise<boolean> {
    const match = this.match(context.url.pathname);
    if (!match) return false;
    const method = req.method === "HEAD" ? "GET" : req.method;
    const handler = match.route.methods[method as keyof HttpRoute["methods"]];
    if (!handler) {
      const allowed = Object.keys(match.route.methods);
      if (allowed.includes("GET")) allowed.push("HEAD");
      sendJson(
        res,
        HttpFailure.methodNotAllowed.status,
        { error: { message: `Method ${req.method ?? "?"} not allowed on ${match.route.path}` } },
        { allow: allowed.join(", ") },
      );
      return true;
    }
    await handler(req, res, { ...context, params: match.params });
    return true;
  }

  private match(pathname: string): { route: HttpRoute; params: Record<string, string> } | null {
    const given = segmentsOf(pathname);
    for (const { route, segments } of this.compiled) {
      const rest = segments.at(-1)?.startsWith("*") === true;
      if (rest ? given.length < segments.length : segments.length !== given.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < segments.length && ok; i++) {
        const expected = segments[i] ?? "";
        const actual = given[i] ?? "";
        if (expected.startsWith("*")) {
          const values = given.slice(i).map(safeDecode);
          if (values.some((value) => value === null || value === "")) ok = false;
          else params[expected.slice(1)] = values.join("/");
        } else if (expected.startsWith(":")) {
          const value = safeDecode(actual);
          if (value === null || value === "") ok = false;
          else params[expected.slice(1)] = value;
        } else if (expected !== actual) ok = false;
      }
      if (ok) return { route, params };
    }
    return null;
  }
}

/** A malformed %-escape is "no match" (→ 404), never an exception. */
function safeDecode(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}
