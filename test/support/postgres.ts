import { randomBytes } from "node:crypto";
import pg from "pg";

/** The CI/session PostgreSQL (trust auth on 127.0.0.1); override with MCP_TASKS_TEST_PG. */
export const TEST_PG_URL = process.env["MCP_TASKS_TEST_PG"] ?? "postgres://postgres@127.0.0.1:5432/test";

/** A name no other test run uses (schemas, channels). */
export function uniqueName(prefix: string): string {
  return `${prefix}_${randomBytes(6).toString("hex")}`;
}

/** Runs one statement on a short-lived connection (to the shared test server unless `url` says otherwise). */
export async function pgQuery(sql: string, params: unknown[] = [], url = TEST_PG_URL): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql, params);
  } finally {
    await client.end();
  }
}

/** Fresh schemas for one test file: `next()` names a new one; `dropAll()` (in afterAll) drops them all. */
export function freshSchemas(prefix: string): { next(): string; dropAll(): Promise<void> } {
  const made: string[] = [];
  return {
    next() {
      const schema = uniqueName(prefix);
      made.push(schema);
      return schema;
    },
    async dropAll() {
      if (made.length > 0) await pgQuery(`DROP SCHEMA IF EXISTS ${made.map((s) => `"${s}"`).join(", ")} CASCADE`);
    },
  };
}
