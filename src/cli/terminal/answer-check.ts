import { answerOf } from "../../web/input-answer.js";

/**
 * What is wrong with `content` as the accepted answer to an elicitation (`params`), naming the field
 * ("Invalid field \"confirm\": expected true or false", "Missing required field \"name\""), or null
 * when it fits the question's requestedSchema. The check is the one the web view's answers pass.
 */
export function answerProblem(params: unknown, content: Record<string, unknown>): string | null {
  try {
    answerOf("elicitation/create", params, { action: "accept", content });
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
