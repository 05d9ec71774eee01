/**
 * The command line that ties a stdio upstream's life to the gateway's (src/gateway/upstream-lifetime.ts),
 * run for real: setpriv and sh from this machine (Linux, util-linux). That the upstream dies with a
 * SIGKILLed gateway is test/gateway/gateway-kill.test.ts.
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { tiedToGateway } from "../../src/gateway/upstream-lifetime.js";

describe("tiedToGateway", () => {
  it("on Linux runs the upstream under setpriv --pdeathsig, its arguments passed through as they are", () => {
    expect(process.platform).toBe("linux"); // the suite's machines; elsewhere the command is unchanged
    const wrapped = tiedToGateway({ command: "printf", args: ["%s|", "two words", `"quoted" $HOME`, ""] });
    expect(wrapped.command).toMatch(/\/setpriv$/);
    expect(wrapped.args.slice(0, 3)).toEqual(["--pdeathsig", "SIGTERM", "--"]);
    const run = spawnSync(wrapped.command, wrapped.args, { encoding: "utf8" });
    expect(run.stderr).toBe("");
    expect(run.stdout).toBe(`two words|"quoted" $HOME||`);
    expect(run.status).toBe(0);
  });

  it("refuses to start the upstream when its parent is no longer the gateway (killed before the death signal was armed)", () => {
    const wrapped = tiedToGateway({ command: "echo", args: ["started"] });
    // Started by a shell rather than by this process: its parent is not the pid it was made for.
    const run = spawnSync("sh", ["-c", '"$@"; exit $?', "sh", wrapped.command, ...wrapped.args], { encoding: "utf8" });
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/the gateway exited before its upstream started/);
    expect(run.status).toBe(1);
  });

  it("leaves the command as it is when it cannot be found (it fails with ENOENT as before) or setpriv is not on PATH", () => {
    expect(tiedToGateway({ command: "no-such-upstream-program", args: ["x"] })).toEqual({
      command: "no-such-upstream-program",
      args: ["x"],
    });
    expect(tiedToGateway({ command: "/no/such/upstream", args: [] })).toEqual({ command: "/no/such/upstream", args: [] });
    expect(tiedToGateway({ command: process.execPath, args: ["x"] }, { PATH: "/nonexistent" })).toEqual({
      command: process.execPath,
      args: ["x"],
    });
  });
});
