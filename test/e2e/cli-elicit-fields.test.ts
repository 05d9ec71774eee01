/**
 * The fields of an elicitation's form as `mcp-tasks call` prompts for them, in a real
 * pseudo-terminal (tmux), in both protocol eras from one table: a prompt starts from the schema's
 * `default` and from nothing else — Enter alone on a field without one asks a required field again
 * and leaves an optional one out — and a typed value is checked as the server checks it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ERAS } from "../support/cli-eras.js";
import { BIN, REPO_ROOT } from "../support/cli-process.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { hasTmux, shellQuote, TmuxTerminal } from "../support/tmux.js";

let server: HttpServerFixture;
let state: string;
let terminal: TmuxTerminal | null = null;

beforeAll(async () => {
  if (!hasTmux()) throw new Error("tmux is not installed: the pseudo-terminal tests of `mcp-tasks call` need it (apt-get install tmux)");
  server = await startHttpServer({ app: { pollIntervalMs: 50 } });
  // Asks the form given in its arguments and answers with what came back, as JSON.
  server.app.tool(
    "ask_form",
    { input: z.object({ form: z.record(z.string(), z.unknown()) }), taskSupport: "required" },
    async ({ form }, ctx) => {
      const answer = await ctx.elicit({ mode: "form", message: "Fill in the form", requestedSchema: form as never });
      return { content: [{ type: "text", text: `answer=${JSON.stringify({ action: answer.action, content: answer.content ?? null })}` }] };
    },
  );
  state = mkdtempSync(join(tmpdir(), "mcp-tasks-elicit-fields-"));
}, 30_000);

afterEach(async () => {
  await terminal?.close();
  terminal = null;
});

afterAll(async () => {
  await server?.close();
  rmSync(state, { recursive: true, force: true });
});

/** The schema of a form with these fields, those in `required` required. */
const form = (properties: Record<string, unknown>, required: string[] = []) => ({ type: "object", properties, required });

/** What the tool answered with: the elicitation's result as the server received it. */
function answered(screen: string): unknown {
  const line = /answer=(\{.*\})\s*$/m.exec(screen)?.[1];
  if (line === undefined) throw new Error(`no answer on the screen:\n${screen}`);
  return JSON.parse(line);
}

describe.each(ERAS)("the elicitation prompts of mcp-tasks call under $name", { timeout: 60_000 }, (era) => {
  async function callAskForm(schema: unknown): Promise<TmuxTerminal> {
    const cli = [process.execPath, BIN, "call", server.url.href, "ask_form", JSON.stringify({ form: schema })].map(shellQuote).join(" ");
    terminal = await TmuxTerminal.start(
      `cd ${shellQuote(REPO_ROOT)} && MCP_TASKS_PROTOCOL=${era.protocol} MCP_TASKS_STATE_DIR=${shellQuote(state)} ${cli}; echo "EXIT=$?"; sleep 600`,
      { width: 200 },
    );
    return terminal;
  }

  it("a required yes/no field without a default is shown (y/n): Enter alone asks again, and the typed n is sent as false", async () => {
    const term = await callAskForm(form({ agree: { type: "boolean", title: "Agree to the terms" } }, ["agree"]));
    const asked = await term.waitFor("? Agree to the terms (y/n)");
    expect(asked).not.toMatch(/\(Y\/n\)|\(y\/N\)/);
    await term.press("Enter");
    await term.waitFor("an answer is required: y or n");
    await term.type("n");
    await term.press("Enter");
    const screen = await term.waitFor("EXIT=");
    expect(answered(screen)).toEqual({ action: "accept", content: { agree: false } });
    expect(screen).toContain("EXIT=0");
  });

  it("an optional yes/no field without a default left blank with Enter is left out of the answer, never sent as true", async () => {
    const term = await callAskForm(form({ agree: { type: "boolean", title: "Agree to the terms" } }));
    await term.waitFor("? Agree to the terms [optional] (y/n)");
    await term.press("Enter");
    const screen = await term.waitFor("EXIT=");
    expect(answered(screen)).toEqual({ action: "accept", content: {} });
    expect(screen).toContain("EXIT=0");
  });

  it("a yes/no field whose schema gives a default starts from it: Enter sends the default", async () => {
    const term = await callAskForm(form({ hd: { type: "boolean", title: "In HD", default: false } }, ["hd"]));
    await term.waitFor("? In HD (y/N)");
    await term.press("Enter");
    const screen = await term.waitFor("EXIT=");
    expect(answered(screen)).toEqual({ action: "accept", content: { hd: false } });
  });

  it("a required choice without a default starts on no choice: Enter alone asks again; an optional one left on (no answer) is left out", async () => {
    const term = await callAskForm(
      form({ colour: { type: "string", enum: ["red", "green"] }, size: { type: "string", enum: ["S", "M"] } }, ["colour"]),
    );
    await term.waitFor("(choose one)");
    await term.press("Enter");
    await term.waitFor("an answer is required: choose one");
    await term.press("Down", "Down", "Enter"); // (choose one) → red → green
    await term.waitFor("(no answer)");
    await term.press("Enter");
    const screen = await term.waitFor("EXIT=");
    expect(answered(screen)).toEqual({ action: "accept", content: { colour: "green" } });
  });

  it("a typed value the server would refuse is refused at the prompt, in the server's words (an email address without a domain)", async () => {
    const term = await callAskForm(form({ email: { type: "string", format: "email" } }, ["email"]));
    await term.waitFor("? email");
    await term.type("ann@example");
    await term.press("Enter");
    await term.waitFor("expected an email address");
    await term.type(".org");
    await term.press("Enter");
    const screen = await term.waitFor("EXIT=");
    expect(answered(screen)).toEqual({ action: "accept", content: { email: "ann@example.org" } });
  });

  it("an optional number left blank is left out; a required text field left blank asks again", async () => {
    const term = await callAskForm(form({ count: { type: "integer" }, name: { type: "string" } }, ["name"]));
    await term.waitFor("? count [optional]");
    await term.press("Enter");
    await term.waitFor("? name");
    await term.press("Enter");
    await term.waitFor("You must provide a value");
    await term.type("Ann");
    await term.press("Enter");
    const screen = await term.waitFor("EXIT=");
    expect(answered(screen)).toEqual({ action: "accept", content: { name: "Ann" } });
  });
});
