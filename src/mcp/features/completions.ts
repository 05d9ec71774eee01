import { z } from "zod";
import { TaskError } from "../../core/errors.js";
import { completionOf, type Completer } from "./completer.js";
import type { FeatureMethod } from "./feature-host.js";
import { paramsOf } from "./feature-params.js";

const CompleteParams = z
  .object({
    ref: z.discriminatedUnion("type", [
      z.object({ type: z.literal("ref/prompt"), name: z.string() }).loose(),
      z.object({ type: z.literal("ref/resource"), uri: z.string() }).loose(),
    ]),
    argument: z.object({ name: z.string(), value: z.string() }).loose(),
    context: z
      .object({ arguments: z.record(z.string(), z.string()).optional() })
      .loose()
      .optional(),
  })
  .loose();

const NOTHING = { completion: { values: [], hasMore: false } };

/**
 * `completion/complete` for a prompt's argument (`ref/prompt`) or a resource template's variable
 * (`ref/resource`, whose `uri` is the template). An unknown prompt or template is -32602; a
 * static resource's URI, or an argument without a completer, gets no suggestions.
 */
export const completionComplete: FeatureMethod = async ({ features }, params, ctx) => {
  const { ref, argument, context } = paramsOf(CompleteParams, params, "completion/complete");
  let completer: Completer | undefined;
  if (ref.type === "ref/prompt") {
    const prompt = features.prompts.get(ref.name);
    if (!prompt) throw TaskError.invalidParams(`Prompt not found: ${ref.name}`);
    completer = (prompt.definition.complete as Readonly<Record<string, Completer | undefined>> | undefined)?.[argument.name];
  } else {
    const template = features.templates.get(ref.uri);
    if (!template) {
      if (features.resources.has(ref.uri)) return NOTHING;
      throw TaskError.invalidParams(`Resource template not found: ${ref.uri}`);
    }
    completer = template.definition.complete?.[argument.name];
  }
  if (!completer) return NOTHING;
  const answer = await completer(argument.value, { ...ctx, arguments: context?.arguments ?? {} });
  return { completion: completionOf(answer) };
};
