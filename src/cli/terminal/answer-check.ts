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

/**
 * What is wrong with `value` as the answer to one field of a form (`field`, its schema), in the
 * server's words without the field's name ("expected an email address"), or null when it fits:
 * a prompt refuses at once what the server would refuse after the form was sent.
 */
export function fieldProblem(field: Record<string, unknown>, value: unknown): string | null {
  const problem = answerProblem({ requestedSchema: { properties: { field } } }, { field: value });
  return problem === null ? null : problem.replace(/^Invalid field "field": /, "");
}
