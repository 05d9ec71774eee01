import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  CreateMessageRequestParamsSchema,
  CreateMessageResultSchema,
  ElicitRequestParamsSchema,
  ElicitResultSchema,
  type ClientCapabilities,
  type CreateMessageRequestParams,
  type ElicitRequestParams,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { ANONYMOUS_CALLER } from "../core/caller.js";
import { TaskError } from "../core/errors.js";
import { localEventBus } from "../events/local-event-bus.js";
import { TaskEngine } from "../runtime/task-engine.js";
import { memoryStore } from "../store/memory/memory-store.js";
import { clientTaskRunner } from "./receiver-runner.js";
import type { ClientReceiverOptions, InputRequestInfo } from "./receiver-options.js";
import * as R from "../mcp/request-schemas.js";
import { SESSION_ERA } from "../mcp/eras.js";
import { cancelRequestIdZeroToo } from "../mcp/sdk-cancel-fix.js";
import { baseSetRequestHandler } from "../mcp/sdk-shapes.js";
import { ELICIT, SAMPLE } from "../mcp/tool-context.js";

/**
 * The client side as a receiver of the server's requests: routes `elicitation/create` and
 * `sampling/createMessage` to the application's handlers — directly, or as client-hosted tasks
 * answered through `tasks/get|result|list|cancel` — and declares the matching capabilities.
 */
export class ClientReceiver {
  /** The engine of client-hosted tasks; null when not hosting. */
  readonly engine: TaskEngine | null;
  private started: Promise<void> | null = null;
  private stopStatus: (() => void) | null = null;

  constructor(
    private readonly client: Client,
    options: ClientReceiverOptions,
  ) {
    const hosting = options.hostTasks === true ? {} : options.hostTasks || null;
    const methods = [...(options.elicit ? [ELICIT] : []), ...(options.sample ? [SAMPLE] : [])];
    this.engine =
      hosting && methods.length > 0
        ? new TaskEngine({
            store: hosting.store ?? memoryStore(),
            bus: hosting.bus ?? localEventBus(),
            runner: clientTaskRunner(options),
            ...(hosting.logger !== undefined && { logger: hosting.logger }),
            ...(hosting.ttl !== undefined && { ttl: hosting.ttl }),
            ...(hosting.pollIntervalMs !== undefined && { pollIntervalMs: hosting.pollIntervalMs }),
            ...(hosting.sweepIntervalMs !== undefined && { sweepIntervalMs: hosting.sweepIntervalMs }),
          })
        : null;
    client.registerCapabilities(clientCapabilities(options, this.engine !== null));
    // T-NEW-4: a task-augmented request we did not declare is processed normally, its task
    // metadata ignored; the SDK would refuse it instead. Our handlers decide (same as the server).
    Object.defineProperty(client, "assertTaskHandlerCapability", { value: () => {}, configurable: true, writable: true });
    cancelRequestIdZeroToo(client);
    if (options.elicit) this.install(ELICIT, R.looseRequest(ELICIT), (params) => parseElicit(params), options.elicit, ElicitResultSchema);
    if (options.sample) {
      this.install(SAMPLE, R.looseRequest(SAMPLE), (params) => parseSample(params), options.sample, CreateMessageResultSchema);
    }
    if (this.engine) this.installTaskHandlers(this.engine);
  }

  /** Starts the engine of client-hosted tasks (idempotent; also done on first use). */
  start(): Promise<void> {
    this.started ??= (async () => {
      if (!this.engine) return;
      await this.engine.start();
      this.stopStatus = this.engine.bus.onAny((event) => {
        if (event.type === "status") void this.notifyStatus(event.taskId);
      });
    })();
    return this.started;
  }

  /** Stops the engine (running handlers are aborted) and closes its store. */
  async close(): Promise<void> {
    this.stopStatus?.();
    if (!this.engine) return;
    await this.engine.close();
    await this.engine.bus.close();
    await this.engine.store.close();
  }

  private install<P extends object, T>(
    method: string,
    schema: z.ZodType<{ method: string; params?: Record<string, unknown> }>,
    parse: (params: unknown) => P,
    handler: (params: P, info: InputRequestInfo) => Promise<T>,
    resultSchema: z.ZodType<T>,
  ): void {
    // Installed past the SDK Client's wrapper for these methods: it insists on a CreateTaskResult
    // whenever params.task is present, which T-NEW-4 contradicts when we do not host tasks.
    baseSetRequestHandler(this.client).call(
      this.client,
      schema as never,
      (async (request: { params?: Record<string, unknown> }, extra: { signal: AbortSignal; requestId: RequestId }) => {
        const raw = request.params ?? {};
        const taskParams = SESSION_ERA.wire.taskParamsOf(raw);
        const plain = SESSION_ERA.wire.withoutTaskParams(raw);
        const params = parse(plain);
        if (this.engine && taskParams !== undefined) {
          if (typeof taskParams !== "object" || taskParams === null || Array.isArray(taskParams)) {
            throw TaskError.invalidParams("Invalid params: task must be an object");
          }
          await this.start();
          const progressToken = (raw["_meta"] as { progressToken?: unknown } | undefined)?.progressToken;
          const task = await this.engine.create({
            owner: null,
            method,
            name: method,
            request: plain,
            origin: {
              sessionId: null,
              progressToken: typeof progressToken === "string" || typeof progressToken === "number" ? progressToken : null,
              accepts: [],
            },
            ttl: SESSION_ERA.wire.requestedTtlOf(taskParams),
          });
          return SESSION_ERA.wire.encodeCreated(task, undefined); // T-NEW-2
        }
        const info: InputRequestInfo = { relatedTaskId: SESSION_ERA.wire.relatedTaskOf(raw), taskId: null, signal: extra.signal };
        const answer = resultSchema.safeParse(await handler(params, info));
        if (!answer.success) throw new TaskError("internal", `The client's ${method} handler returned an invalid result`);
        return answer.data;
      }) as never,
    );
  }

  private installTaskHandlers(engine: TaskEngine): void {
    const on = (method: string, handler: (params: R.LooseParams, extra: { signal: AbortSignal }) => Promise<object>): void => {
      this.client.setRequestHandler(
        R.looseRequest(method) as never,
        (async (request: { params?: Record<string, unknown> }, extra: { signal: AbortSignal }) => {
          await this.start();
          return handler(request.params, extra);
        }) as never,
      );
    };
    // A client has one server: its tasks are bound to nobody (T-SEC-2; ids are unguessable).
    for (const [method, { receiver: answer }] of Object.entries(SESSION_ERA.methods)) {
      if (!answer) continue;
      on(method, (params, extra) => answer(engine, params, { caller: ANONYMOUS_CALLER, signal: extra.signal }));
    }
  }

  private async notifyStatus(taskId: string): Promise<void> {
    const task = await this.engine?.inspect.task(taskId).catch(() => null);
    if (!task || !this.client.transport) return;
    // T-NOTE-1 (MAY), T-NOTE-3: the full Task, no related-task _meta.
    await this.client.notification(SESSION_ERA.wire.hostedStatusNotification(task) as never).catch(() => {});
  }
}

/** Capabilities of a client with these handlers (T-CAP-1/2). */
export function clientCapabilities(options: ClientReceiverOptions, hosting: boolean): ClientCapabilities {
  return {
    ...(options.elicit && { elicitation: { form: {} } }),
    ...(options.sample && { sampling: {} }),
    ...(hosting && {
      tasks: {
        list: {},
        cancel: {},
        requests: {
          ...(options.elicit && { elicitation: { create: {} } }),
          ...(options.sample && { sampling: { createMessage: {} } }),
        },
      },
    }),
  };
}

function parseElicit(params: unknown): ElicitRequestParams {
  const parsed = ElicitRequestParamsSchema.safeParse(params);
  if (!parsed.success) throw TaskError.invalidParams(`Invalid elicitation request: ${summary(parsed.error)}`);
  const value = parsed.data as ElicitRequestParams;
  if (value.mode === "url") throw TaskError.invalidParams("This client does not support URL-mode elicitation requests");
  return value;
}

function parseSample(params: unknown): CreateMessageRequestParams {
  const parsed = CreateMessageRequestParamsSchema.safeParse(params);
  if (!parsed.success) throw TaskError.invalidParams(`Invalid sampling request: ${summary(parsed.error)}`);
  return parsed.data;
}

function summary(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
}

export type { ClientReceiverOptions, ClientTaskHosting, ElicitHandler, InputRequestInfo, SampleHandler } from "./receiver-options.js";
