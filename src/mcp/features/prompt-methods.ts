import { z } from "zod";
import { TaskError } from "../../core/errors.js";
import type { FeatureMethod } from "./feature-host.js";
import { ListParams, paramsOf } from "./feature-params.js";
import { listPage } from "./list-page.js";
import { describePrompt, renderPrompt } from "./prompts.js";

const GetParams = z.object({ name: z.string(), arguments: z.record(z.string(), z.string()).optional() }).loose();

/** `prompts/list`, in registration order, a page at a time. */
export const promptsList: FeatureMethod = async ({ features, store, pageSize }, params) => {
  const { cursor } = paramsOf(ListParams, params, "prompts/list") ?? {};
  const prompts = [...features.prompts.values()].map(describePrompt);
  const page = await listPage(store, "prompts", prompts, (prompt) => prompt.name, cursor, pageSize);
  return { prompts: page.items, ...(page.nextCursor !== undefined && { nextCursor: page.nextCursor }) };
};

/** `prompts/get`: an unknown prompt, like arguments its schema refuses, is -32602 (MCP spec, prompts). */
export const promptsGet: FeatureMethod = async ({ features }, params, ctx) => {
  const { name, arguments: args } = paramsOf(GetParams, params, "prompts/get");
  const prompt = features.prompts.get(name);
  if (!prompt) throw TaskError.invalidParams(`Prompt not found: ${name}`);
  return { ...(await renderPrompt(prompt, args, ctx)) };
};
