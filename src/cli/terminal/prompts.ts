import type * as Inquirer from "@inquirer/prompts";
import { optionalPackage } from "../optional-package.js";

let loaded: typeof Inquirer | null | undefined;

/**
 * @inquirer/prompts, an optional peer dependency, when installed: without it a terminal is
 * treated as one nobody answers at (questions are declined with a note, `--answer` still works).
 */
export function inquirer(): typeof Inquirer | null {
  if (loaded === undefined) loaded = optionalPackage<typeof Inquirer>("@inquirer/prompts");
  return loaded;
}

/** @inquirer/prompts, for code that runs only where {@link inquirer} found it. */
export function prompts(): typeof Inquirer {
  const found = inquirer();
  if (found === null) throw new Error("@inquirer/prompts is not installed");
  return found;
}
