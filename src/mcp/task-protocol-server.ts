import { Server, type ServerOptions } from "@modelcontextprotocol/sdk/server/index.js";
import { Protocol } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { ClientCapabilities, Implementation } from "@modelcontextprotocol/sdk/types.js";

/**
 * The SDK `Server` with its experimental task machinery kept out of the way: tasks are a layer on
 * top of the protocol, implemented by our handlers.
 */
export class TaskProtocolServer extends Server {
  private knownClientCapabilities: ClientCapabilities | undefined;

  constructor(info: Implementation, options: ServerOptions) {
    super(info, options);
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
