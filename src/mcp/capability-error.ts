import { TaskError } from "../core/errors.js";

/** Thrown into a handler that asks the requestor something it declared it cannot answer (T-INPUT). */
export class CapabilityError extends TaskError {
  constructor(capability: "elicitation" | "sampling" | "roots") {
    super("method_not_found", `The client does not support ${capability}: it did not declare the '${capability}' capability`);
    this.name = "CapabilityError";
  }
}
