#!/usr/bin/env node
// The CLI from the TypeScript sources through tsx (a devDependency), never from a possibly stale
// dist/: what the repository's tests, benches and `npm start` run. Not shipped.
import { register } from "tsx/esm/api";

register();
await import(new URL("../src/cli/main.ts", import.meta.url).href);
