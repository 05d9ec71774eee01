import { DEFAULT_BACKGROUND_AFTER_MS, DEFAULT_INLINE_WAIT_MS } from "../mcp/task-server-config.js";
import { shutdownTelemetry } from "./telemetry.js";
import { randomBytes, randomUUID } from "node:crypto";
import { Command, InvalidArgumentError, Option } from "commander";
import { staticTokenVerifier } from "../http/bearer-auth.js";
import { DEFAULT_MAX_SESSIONS, DEFAULT_MAX_SESSIONS_PER_CLIENT, serveHttp, type HttpHandle } from "../http/http-server.js";
import { loadTokenFile } from "../http/token-file.js";
import type { Redaction } from "../web/task-view.js";
import { openBackend } from "./backend.js";
import type { Logger } from "../core/logger.js";
import type { TaskServer } from "../mcp/task-server.js";
import { startApp } from "./start-app.js";
import { createLogger } from "./logger.js";
import { AuthFlagsError, httpUrl, jwtAuthFrom, refuseAuthOverStdio, scopeList, type JwtFlags } from "./jwt-options.js";
import { msOrOff, nonNegativeInt, port, positiveInt, ttlMs } from "./options.js";
import {
  maxActiveTasksOption,
  maxQueuedInputsOption,
  maxQueuedPerPrincipalOption,
  maxResultBytesOption,
  keepFinishedOption,
  rememberExpiredOption,
  maxRunningPerPrincipalOption,
  maxStoredTasksOption,
  type FairShareFlags,
  type RunLimitFlags,
  type RetentionFlags,
  type TaskLimitFlags,
} from "./limit-options.js";
import { redactFields, traceUrlTemplate } from "./web-options.js";
import { callerOptions, callerServerOptions, type CallerFlags } from "./caller-options.js";
import { ExitCode } from "./exit-codes.js";
import { usageError } from "./requestor-options.js";
import { COMMAND_SUMMARIES } from "./command-summaries.js";
import { exitIfStartupRefused } from "./startup-failure.js";
import { checkPortFree } from "./port-check.js";
import { drainTimeoutOption, exitIfStoreInUse, type DrainFlags } from "./drain-options.js";
import { onStopSignals } from "../runtime/stop-signals.js";
import { drainAndClose, type StopSteps } from "../mcp/stop-on-signals.js";
import { allowedOriginsOption, type OriginFlags } from "./origin-options.js";
import { httpTimeoutOptions, httpTimeoutsFrom, type HttpTimeoutFlags } from "./http-timeout-options.js";
import { StdioGuard } from "./stdio-guard.js";
import { StdioOutput } from "./stdio-output.js";
import { DEFAULT_MAX_BODY_BYTES } from "../http/http-options.js";
import { webhookOptions, webhooksFrom, type WebhookFlags } from "./webhook-options.js";

/** The options every serving command (`serve`, `gateway`) takes. */
export interface ServeOptions
  extends
    JwtFlags,
    CallerFlags,
    TaskLimitFlags,
    RunLimitFlags,
    DrainFlags,
    FairShareFlags,
    RetentionFlags,
    OriginFlags,
    HttpTimeoutFlags,
    WebhookFlags {
  port: number;
  host: string;
  store: string;
  stdio?: boolean;
  demo?: boolean;
  tools?: string;
  defaultTtl: number | null;
  maxTtl: number | null;
  pollInterval: number;
  inlineWaitMs: number;
  backgroundAfter: number | null;
  fallbackRequired?: boolean;
  tasks: boolean;
  logLevel: string;
  web: boolean;
  adminToken?: string;
  redact?: Partial<Redaction>;
  traceUrl?: string;
  metricsToken?: string;
  /** Absent: 8 in a cluster, unlimited on a single node. */
  workers?: number;
  maxQueuedPerPrincipal?: number;
  leaseMs: number;
  maxSessions: number;
  maxSessionsPerClient: number;
}

/** Handlers a cluster node runs at once without `--workers`. */
const DEFAULT_CLUSTER_WORKERS = 8;

export function serveCommand(): Command {
  const command = serverOptions(new Command("serve").description(COMMAND_SUMMARIES.serve.description), (c) =>
    c
      .option("--demo", "expose the demo tools (echo, sleep, fail, throw, ask, nap, approve, sample, batch, steps)")
      .option("--tools <module>", "load tools from a module exporting default (app) => void"),
  );
  return withServeAction(command, (opts) => {
    if (!opts.demo && !opts.tools) {
      throw new InvalidArgumentError("nothing to serve: pass --demo and/or --tools MODULE");
    }
    return runServer(opts);
  });
}

/**
 * Adds the options of a serving command: HTTP or stdio, auth, store, limits, web view, metrics,
 * cluster; `tools` adds the command's own way to get tools, listed after `--stdio`.
 */
export function serverOptions(start: Command, tools: (command: Command) => Command): Command {
  const command = tools(
    start
      .addOption(new Option("--port <n>", "HTTP port (0 picks a free one)").env("PORT").argParser(port).default(3000))
      .option("--host <address>", "HTTP bind address", "127.0.0.1")
      .addOption(allowedOriginsOption())
      .option("--store <spec>", "task store: sqlite:PATH | PATH.db | memory | postgres://…[?schema=NAME] (cluster)", "sqlite:mcp-tasks.db")
      .option("--stdio", "serve one client over stdin/stdout instead of HTTP"),
  )
    .option(
      "--auth-tokens <file>",
      'HTTP bearer auth from a JSON file {"<token>": "<principal>" | {"principal": "<principal>", "admin": true}}',
    )
    .option(
      "--jwt-issuer <url>",
      "JWT bearer auth (production): required token issuer (iss); needs --jwt-audience and a key source",
      httpUrl,
    )
    .option("--jwt-audience <aud>", "JWT auth: required audience (aud)")
    .option("--jwt-jwks-url <url>", "JWT auth: verify signatures with the issuer's JWKS", httpUrl)
    .option("--jwt-public-key <file>", "JWT auth: verify signatures with this public key (PEM or JWK JSON)")
    .option("--jwt-scopes <a,b>", "JWT auth: scopes every token must carry (else 403 insufficient_scope)", scopeList)
    .option("--jwt-clock-tolerance <seconds>", "JWT auth: leeway on exp/nbf for clock skew (default 30)", nonNegativeInt)
    .option(
      "--jwt-max-lifetime <seconds>",
      "JWT auth: longest token lifetime accepted, exp - iat (exp - now without iat); tokens without exp are always refused (default 86400)",
      positiveInt,
    )
    .option(
      "--resource-url <url>",
      "JWT auth: this server's public MCP URL, for the protected-resource metadata (default: the listen URL)",
      httpUrl,
    )
    .option("--default-ttl <ms>", 'ttl for tasks that request none, or "unlimited"', ttlMs, 3_600_000)
    .option("--max-ttl <ms>", 'cap on requested ttls, or "unlimited"', ttlMs, 86_400_000)
    .option("--poll-interval <ms>", "pollInterval suggested to requestors", nonNegativeInt, 1000)
    .option(
      "--inline-wait-ms <ms>",
      "2026-07-28: how long a call of a taskSupport optional tool waits for its task before answering with the task instead of the result (0: never)",
      nonNegativeInt,
      DEFAULT_INLINE_WAIT_MS,
    )
    .option(
      "--background-after <ms>",
      'clients without task support: a call of a task-capable tool still running after this answers that it goes on in the background (task_* tools to follow it); "off" switches the fallback off',
      msOrOff,
      DEFAULT_BACKGROUND_AFTER_MS,
    )
    .option(
      "--fallback-required",
      'clients without task support may call taskSupport "required" tools too, through the fallback (default: the spec\'s refusal)',
    )
    .addOption(maxActiveTasksOption())
    .addOption(maxStoredTasksOption())
    .addOption(maxQueuedInputsOption())
    .addOption(maxResultBytesOption())
    .addOption(keepFinishedOption())
    .addOption(rememberExpiredOption())
    .option(
      "--max-sessions <n>",
      "HTTP sessions this process holds at most (local sessions; beyond: 503)",
      positiveInt,
      DEFAULT_MAX_SESSIONS,
    )
    .option(
      "--max-sessions-per-client <n>",
      "HTTP sessions one principal (or address, without auth) holds at once (beyond: 429)",
      positiveInt,
      DEFAULT_MAX_SESSIONS_PER_CLIENT,
    )
    .option(
      "--workers <n>",
      "handlers this node runs at once, more tasks wait queued (default: 8 in a cluster, where 0 makes a pure front node; unlimited on a single node)",
      nonNegativeInt,
    )
    .addOption(maxRunningPerPrincipalOption())
    .addOption(maxQueuedPerPrincipalOption())
    .option("--lease-ms <ms>", "cluster: how long a worker's claim on a task lasts without renewal", nonNegativeInt, 30_000)
    .addOption(drainTimeoutOption())
    .option("--no-tasks", "switch task support off (params.task is then ignored)")
    .option("--log-level <level>", "log level: trace, debug, info, warn, error, fatal or silent (logs go to stderr)", "info")
    .option("--no-web", "do not serve the web view of tasks at /tasks")
    .addOption(
      new Option(
        "--admin-token <token>",
        "bearer token that opens the web view as admin (all owners' tasks) and may emit events for any owner",
      ).env("MCP_TASKS_ADMIN_TOKEN"),
    )
    .option("--redact <fields>", "hide from the web view: comma-separated arguments, results, inputs, or all", redactFields)
    .option(
      "--trace-url <template>",
      "link a task's trace id in the web view to your trace viewer: a URL containing {traceId}",
      traceUrlTemplate,
    )
    .addOption(
      new Option("--metrics-token <token>", "require this bearer token on /metrics (default: /metrics is open)").env(
        "MCP_TASKS_METRICS_TOKEN",
      ),
    );
  for (const option of callerOptions()) command.addOption(option);
  for (const option of httpTimeoutOptions()) command.addOption(option);
  for (const option of webhookOptions()) command.addOption(option);
  return command;
}

/**
 * Runs a serving command's action: usage errors (exit 2) and a store in use (exit 7) are
 * reported as such; anything else propagates (exit 1).
 */
export function withServeAction<O extends ServeOptions>(command: Command, run: (opts: O) => Promise<void>): Command {
  // Usage errors exit 2 (ExitCode.Usage), as for call and tasks; help still exits 0.
  command.exitOverride((error) => {
    process.exit(error.code === "commander.helpDisplayed" || error.code === "commander.version" ? ExitCode.Ok : ExitCode.Usage);
  });
  return command.action(async (opts: O) => {
    try {
      await run(opts);
    } catch (error) {
      // Flags that are missing or cannot go together: refused before anything was opened.
      if (error instanceof AuthFlagsError || error instanceof InvalidArgumentError) usageError(command, error);
      // Another server runs tasks from this SQLite file: refused before touching any of them.
      exitIfStoreInUse(error);
      // A port in use, an unreachable PostgreSQL: one line naming the flag to change.
      exitIfStartupRefused(error, opts);
      throw error;
    }
  });
}

/** What a serving command adds to `serve`: its tools, and what to close on the way out. */
export interface ServeHooks {
  /** Registers tools on the server before it starts. */
  register?: (app: TaskServer, logger: Logger) => Promise<void>;
  /** Closes what `register` opened, after the server has drained and closed. */
  close?: () => Promise<void>;
}

/** Serves a TaskServer as the options say, over HTTP or stdio, until a stop signal. */
export async function runServer(opts: ServeOptions, hooks: ServeHooks = {}): Promise<void> {
  const logger = createLogger(opts.logLevel);
  if (opts.stdio) refuseAuthOverStdio(opts);
  // Before opening anything: a bad auth configuration must fail fast, not serve unauthenticated.
  const jwt = opts.stdio ? null : await jwtAuthFrom(opts);
  const authFlag = opts.stdio
    ? null
    : opts.jwtIssuer !== undefined
      ? "--jwt-issuer"
      : opts.authTokens !== undefined
        ? "--auth-tokens"
        : null;
  const callers = callerServerOptions(opts, authFlag);
  const timeouts = httpTimeoutsFrom(opts);
  const webhooks = webhooksFrom(opts);
  // A port in use refuses the start before the store exists (no SQLite file left behind).
  if (!opts.stdio) await checkPortFree(opts.host, opts.port);
  const backend = openBackend(opts.store, logger);
  if (!backend.shared && opts.workers === 0) {
    await backend.store.close();
    throw new InvalidArgumentError(
      "--workers 0 makes a pure front node, which only a cluster (a postgres store) has: a single node would never run a task",
    );
  }
  const register = hooks.register;
  const concurrency = opts.workers ?? DEFAULT_CLUSTER_WORKERS;
  const { app } = await startApp(
    "serve",
    backend,
    logger,
    { ...opts, concurrency, ...(register && { register: (a: TaskServer) => register(a, logger) }) },
    {
      tasks: opts.tasks,
      ttl: { defaultTtlMs: opts.defaultTtl, maxTtlMs: opts.maxTtl },
      pollIntervalMs: opts.pollInterval,
      inlineWaitMs: opts.inlineWaitMs,
      backgroundAfterMs: opts.backgroundAfter,
      ...(opts.fallbackRequired === true && { fallbackRequired: true }),
      maxActivePerOwner: opts.maxActiveTasks,
      maxStoredPerOwner: opts.maxStoredTasks,
      maxQueuedInputs: opts.maxQueuedInputs,
      maxResultBytes: opts.maxResultBytes,
      keepFinishedMs: opts.keepFinished,
      rememberExpiredMs: opts.rememberExpired,
      ...(!backend.shared && opts.workers !== undefined && { maxRunning: opts.workers }),
      ...(opts.maxRunningPerPrincipal !== undefined && { maxRunningPerOwner: opts.maxRunningPerPrincipal }),
      ...(opts.maxQueuedPerPrincipal !== undefined && { maxQueuedPerOwner: opts.maxQueuedPerPrincipal }),
      ...callers,
      ...(webhooks && { webhooks }),
    },
  );

  // The stop every server has (src/mcp/stop-on-signals.ts), then what this command opened.
  const stopSteps = (http?: HttpHandle): StopSteps => ({
    drainTimeoutMs: opts.drainTimeout,
    ...(http && { stopAccepting: () => http.server.close() }),
    closeAfter: async () => {
      await hooks.close?.();
      await http?.close();
      await shutdownTelemetry();
      logger.flush();
    },
  });

  if (opts.stdio) {
    // Loaded only here, like the web view below: what a run does not serve, it does not load.
    const { StdioServerTransport } = await import("@modelcontextprotocol/sdk/server/stdio.js");
    let begin = (): void => {};
    // A client gone while its tasks run: drain as when stdin ends, writing to nobody (stdio-output.ts).
    const output = new StdioOutput(process.stdout, (error) => {
      logger.info({ reason: error.message }, "stdout closed by the client: draining");
      begin();
    });
    // The guard answers the lines the SDK's transport would drop unanswered (stdio-guard.ts).
    const guard = new StdioGuard((line) => output.write(line), DEFAULT_MAX_BODY_BYTES);
    process.stdin.pipe(guard);
    const transport = new StdioServerTransport(guard, output);
    // One session per process: bound to the session, tasks stay with the process that made them.
    await app.connect(transport, opts.bind === "session" ? `stdio-${randomUUID()}` : "stdio", { peer: "stdio", handleSignals: false });
    begin = onStopSignals(logger, () => drainAndClose(app, stopSteps())).begin;
    process.stdin.on("end", begin);
    logger.info({ store: opts.store, tools: app.toolNames }, "serving MCP over stdio");
    return;
  }
  const verifier = jwt?.verifier ?? (opts.authTokens ? staticTokenVerifier(loadTokenFile(opts.authTokens)) : undefined);
  // Without any credential nobody could sign in to the web view: a token for this run only, shown once.
  const runToken = opts.web && opts.adminToken === undefined && !verifier ? randomBytes(24).toString("base64url") : undefined;
  const adminToken = opts.adminToken ?? runToken;
  const routes = opts.web
    ? (await import("../web/web-routes.js")).webRoutes(app, {
        ...(adminToken !== undefined && { adminTokens: [adminToken] }),
        ...(verifier && { verifier }),
        ...(opts.redact && { redact: opts.redact }),
        ...(opts.traceUrl !== undefined && { traceUrl: opts.traceUrl }),
      })
    : [];
  app.metrics?.includeProcessMetrics();
  const http = await serveHttp(app, {
    port: opts.port,
    host: opts.host,
    ...(opts.allowedOrigins && { allowedOrigins: opts.allowedOrigins }),
    ...(verifier && { verifier }),
    ...(jwt && { protectedResource: jwt.protectedResource }),
    ...(adminToken !== undefined && { adminTokens: [adminToken] }),
    routes,
    ...(opts.metricsToken !== undefined && { metricsToken: opts.metricsToken }),
    ...(opts.trustProxy !== undefined && { trustProxy: opts.trustProxy }),
    maxSessions: opts.maxSessions,
    maxSessionsPerClient: opts.maxSessionsPerClient,
    ...timeouts,
    handleSignals: false,
  });
  const web = opts.web ? new URL("/tasks", http.url).href : "off";
  onStopSignals(logger, () => drainAndClose(app, stopSteps(http)));
  logger.info(
    { url: http.url, web, store: opts.store, auth: jwt ? "jwt" : verifier ? "bearer tokens" : "none", tools: app.toolNames },
    `listening on ${http.url}`,
  );
  if (runToken !== undefined) {
    // Not through the logger: log lines never carry a token (docs/security.md). The fragment
    // never reaches a server log either; the page reads it and drops it from the address bar.
    process.stderr.write(
      `Web view: open ${web}#token=${runToken} to sign in as admin (a token for this run only; --admin-token sets your own)\n`,
    );
  }
}
