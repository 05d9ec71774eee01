import { InvalidArgumentError } from "commander";
import type { Redaction } from "../web/task-view.js";

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
