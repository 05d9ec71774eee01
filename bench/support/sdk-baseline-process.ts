/**
 * The SDK baseline (bench/sdk-baseline-server.ts) as a process of its own, for `npm run bench:serve`:
 * prints `listening on <url>` on stdout, then serves until killed.
 *
 *   node --import tsx bench/support/sdk-baseline-process.ts [pollIntervalMs]
 */
import { startSdkBaseline } from "../sdk-baseline-server.js";

const pollIntervalMs = Number(process.argv[2] ?? 1000);
const handle = await startSdkBaseline({ pollIntervalMs });
process.stdout.write(`listening on ${handle.url}\n`);
