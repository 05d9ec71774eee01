/** `mcp-tasks/demo` — the demo tools of `mcp-tasks serve --demo` (echo, sleep, ask, sample, …), for trying a client against. */
export { registerDemoTools } from "../demo/demo-tools.js";
/** The official conformance suite's fixture tools (its `tasks-*` scenarios), served by `npm run conformance-server`. */
export { registerConformanceTools } from "../demo/conformance-tools.js";
