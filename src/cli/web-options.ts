import { InvalidArgumentError } from "commander";
import type { Redaction } from "../web/task-view.js";
import { traceUrlProblem } from "../web/trace-link.js";

const FIELDS = ["arguments", "results", "inputs"] as const;

/** Parses `--redact`: a comma-separated list of arguments, results, inputs, or "all". */
export function redactFields(value: string): Partial<Redaction> {
  const redaction: Partial<Redaction> = {};
  for (const part of value.split(",").map((p) => p.trim())) {
    if (part === "all") for (const field of FIELDS) redaction[field] = true;
    else if ((FIELDS as readonly string[]).includes(part)) redaction[part as (typeof FIELDS)[number]] = true;
    else throw new InvalidArgumentError(`expected a comma-separated list of ${FIELDS.join(", ")} or "all", not "${part}"`);
  }
  return redaction;
}

/** Parses `--trace-url`: an http(s) URL template containing {traceId}, refused at start-up rather than as a broken link. */
export function traceUrlTemplate(value: string): string {
  const problem = traceUrlProblem(value);
  if (problem !== undefined) throw new InvalidArgumentError(problem);
  return value;
}
