import { z } from "zod";
import { TaskError } from "../../core/errors.js";

/** The params of a paginated list request. */
export const ListParams = z.object({ cursor: z.string().optional() }).loose().optional();

/** Reads params with a schema; a mismatch is the requestor's error (-32602), its issues in a few words. */
export function paramsOf<S extends z.ZodType>(schema: S, params: unknown, method: string): z.output<S> {
  const parsed = schema.safeParse(params);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.slice(0, 5).map((issue) => `${issue.path.map(String).join(".") || "(root)"}: ${issue.message}`);
  throw TaskError.invalidParams(`Invalid params for ${method}: ${issues.join("; ")}`);
}
