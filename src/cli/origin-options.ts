import { InvalidArgumentError, Option } from "commander";
import { originProblem } from "../http/origin-check.js";

/** The flag of a serving command's Origin check (docs/security.md, "Browsers and DNS rebinding"). */
export interface OriginFlags {
  /** `--allowed-origins`: more origins served besides loopback ones and the bound address's. */
  allowedOrigins?: string[];
}

/**
 * `--allowed-origins <a,b>`: comma-separated `http(s)://host[:port]` origins, each checked at
 * start-up. Also read from MCP_TASKS_ALLOWED_ORIGINS, which a container or compose file sets; an
 * empty value (a compose file's default when the variable is unset) names none, as the default.
 */
export function allowedOriginsOption(): Option {
  return new Option(
    "--allowed-origins <origins>",
    "comma-separated http(s)://host[:port] origins whose browser pages may use the server, besides loopback ones and the bind address's (any other Origin: 403) (default: none)",
  )
    .env("MCP_TASKS_ALLOWED_ORIGINS")
    .argParser(originList);
}

function originList(value: string): string[] {
  const origins = value
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "");
  for (const origin of origins) {
    const problem = originProblem(origin);
    if (problem !== undefined) throw new InvalidArgumentError(problem);
  }
  return origins;
}
