import { Server, type ServerOptions } from "@modelcontextprotocol/sdk/server/index.js";
import { Protocol } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { ClientCapabilities, Implementation } from "@modelcontextprotocol/sdk/types.js";
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";

/**
 * The SDK's Ajv validator, built on first use. The SDK builds one per `Server` (an Ajv instance
 * with its formats: about a millisecond of CPU and a few hundred kB), used only by
 * `Server.elicitInput`, which this package never calls; a cluster node builds a `Server` for every
 * HTTP request, so an eager one was a large share of each request's cost. Not shared between
 * servers: Ajv caches every schema object it compiles.
 */
class LazyAjvValidator implements jsonSchemaValidator {
  private inner: AjvJsonSchemaValidator | null = null;

  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    this.inner ??= new AjvJsonSchemaValidator();
    return this.inner.getValidator<T>(schema);
  }
}

/**
 * The SDK `Server` with its experimental task machinery kept out of the way: tasks are a layer on
 * top of the protocol, implemented by our handlers.
 */
export class TaskProtocolServer extends Server {
  private knownClientCapabilities: ClientCapabilities | undefined;

  constructor(info: Implementation, options: ServerOptions) {
    super(info, { jsonSchemaValidator: new LazyAjvValidator(), ...options });
  }

  /**
   * For a server that serves one request of a session initialized elsewhere (cluster HTTP): the
   * client's capabilities as recorded at that initialization.
   */
  useClientCapabilities(capabilities: ClientCapabilities): void {
    this.knownClientCapabilities = capabilities;
  }

  override getClientCapabilities(): ClientCapabilities | undefined {
    return super.getClientCapabilities() ?? this.knownClientCapabilities;
  }

  /**
   * The SDK refuses a task-augmented request when `capabilities.tasks` lacks it; T-NEW-4 says
   * such a request is processed normally with its task metadata ignored. Our tools/call handler
   * makes that decision, so the SDK's check is disabled.
   */
  protected override assertTaskHandlerCapability(): void {}

  /**
   * The SDK wraps tools/call to re-validate results against its own expectations (a
   * CreateTaskResult whenever `params.task` is present — wrong when tasks are switched off).
   * Our handler validates the request and shapes the result itself, so it is installed directly.
   */
  override setRequestHandler(...args: Parameters<Server["setRequestHandler"]>): void {
    Protocol.prototype.setRequestHandler.apply(this, args as never);
  }
}
