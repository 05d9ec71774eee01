import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

/**
 * The CLI's terminal comforts and the OpenTelemetry SDK are optional peer dependencies
 * (docs/packaging.md): a library install never gets them, and
 * `npx mcp-tasks serve` runs without them. This loads one if the application (or a global
 * install beside the CLI) has it, and gives null if it is not installed; any other failure of the
 * package itself is thrown.
 */
export function optionalPackage<T>(name: string): T | null {
  try {
    return require(name) as T;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const message = String((error as { message?: unknown }).message ?? "");
    if ((code === "MODULE_NOT_FOUND" || code === "ERR_MODULE_NOT_FOUND") && message.includes(`'${name}'`)) return null;
    throw error;
  }
}

/** The command that installs the optional `names` for the CLI, for the messages that ask for them. */
export function installHint(...names: string[]): string {
  return `npm install ${names.join(" ")} (beside mcp-tasks; for npx: npx -p mcp-tasks ${names.map((n) => `-p ${n}`).join(" ")} mcp-tasks …)`;
}
