// A stand-in for the person's browser in the CLI's OAuth tests, started through $BROWSER as
// xdg-open would start one: it loads the URL and follows the redirects, as a browser does when the
// authorization server signs the user in at once. Appends each URL it opened to $OPENED_LOG;
// waits $BROWSER_DELAY_MS first (a person reading the page).
import { appendFileSync } from "node:fs";

const url = process.argv[2];
if (process.env.OPENED_LOG) appendFileSync(process.env.OPENED_LOG, `${url}\n`);
await new Promise((resolve) => setTimeout(resolve, Number(process.env.BROWSER_DELAY_MS ?? 0)));
const response = await fetch(url, { redirect: "follow" });
await response.body?.cancel();
