import type { Resource } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { FeatureMethod } from "./feature-host.js";
import type { FeatureRegistry } from "./feature-registry.js";
import { ListParams, paramsOf } from "./feature-params.js";
import { listPage } from "./list-page.js";
import { describeTemplate, matchTemplate } from "./resource-templates.js";
import { contentsOf, describeResource, resourceNotFound } from "./resources.js";

const UriParams = z.object({ uri: z.string() }).loose();

/**
 * `resources/list`: the static resources, then what each template's `list` callback names, in
 * registration order, a page at a time.
 */
export const resourcesList: FeatureMethod = async ({ features, store, pageSize }, params, ctx) => {
  const { cursor } = paramsOf(ListParams, params, "resources/list") ?? {};
  const resources: Resource[] = [...features.resources.values()].map(({ definition }) => describeResource(definition));
  for (const template of [...features.templates.values()]) {
    const listed = (await template.definition.list?.(ctx)) ?? [];
    resources.push(...listed.map(describeResource));
  }
  const page = await listPage(store, "resources", resources, (resource) => resource.uri, cursor, pageSize);
  return { resources: page.items, ...(page.nextCursor !== undefined && { nextCursor: page.nextCursor }) };
};

/** `resources/templates/list`, in registration order, a page at a time. */
export const resourceTemplatesList: FeatureMethod = async ({ features, store, pageSize }, params) => {
  const { cursor } = paramsOf(ListParams, params, "resources/templates/list") ?? {};
  const templates = [...features.templates.values()].map(({ definition }) => describeTemplate(definition));
  const page = await listPage(store, "resource-templates", templates, (template) => template.uriTemplate, cursor, pageSize);
  return { resourceTemplates: page.items, ...(page.nextCursor !== undefined && { nextCursor: page.nextCursor }) };
};

/**
 * `resources/read`: the static resource of that URI, else the first template (in registration
 * order) that matches it; neither is -32002 with the URI in `data` (MCP spec, Error Handling).
 */
export const resourcesRead: FeatureMethod = async ({ features }, params, ctx) => {
  const { uri } = paramsOf(UriParams, params, "resources/read");
  const resource = features.resources.get(uri);
  if (resource) return { contents: contentsOf(await resource.read(uri, ctx), uri, resource.definition.mimeType) };
  const matched = matchTemplate(features.templates.values(), uri);
  if (!matched) throw resourceNotFound(uri);
  const { template, variables } = matched;
  return { contents: contentsOf(await template.read(uri, variables, ctx), uri, template.definition.mimeType) };
};

/** Whether a URI names a resource of this server (a static one, or one a template matches). */
export function knowsResource(features: FeatureRegistry, uri: string): boolean {
  return features.resources.has(uri) || matchTemplate(features.templates.values(), uri) !== undefined;
}
