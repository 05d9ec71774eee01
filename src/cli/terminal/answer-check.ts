import { checkFormAnswer, formOf } from "../../core/form-answer.js";

/**
 * What is wrong with `content` as the accepted answer to an elicitation (`params`), naming the field
 * ("Invalid field \"confirm\": expected true or false", "Missing required field \"name\""), or null
 * when it fits the question's requestedSchema. The check is the one the server applies to every
 * answer it is given, so what passes here is not refused there.
 */
export function answerProblem(params: unknown, content: Record<string, unknown>): string | null {
  const form = formOf(params);
  if (form === null) return null;
  try {
    checkFormAnswer(form, { action: "accept", content });
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
