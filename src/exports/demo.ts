/** `mcp-tasks/demo` — the demo tools of `mcp-tasks serve --demo` (echo, sleep, ask, sample, …), for trying a client against. */
export { registerDemoTools } from "../demo/demo-tools.js";
