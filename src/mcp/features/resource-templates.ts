import type { ResourceTemplate } from "@modelcontextprotocol/sdk/types.js";
import type { Annotations } from "./resources.js";
import { UriTemplate, type Variables } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
import type { Completer } from "./completer.js";
import type { FeatureContext } from "./feature-context.js";
import type { ResourceDefinition, ResourceReadResult } from "./resources.js";

/** The values a URI gave a template's variables (a list for an exploded `{var*}`). */
export type TemplateVariables = Variables;

/** Declares a family of resources by an RFC 6570 URI template, such as `file:///logs/{date}`. */
export interface ResourceTemplateDefinition {
  /** The URI template (RFC 6570), unique on this server; `completion/complete` names it as `ref.uri`. */
  uriTemplate: string;
  /** A programmatic name. */
  name: string;
  title?: string;
  description?: string;
  /** The MIME type of every resource of the template; the default of each part `read` returns. */
  mimeType?: string;
  annotations?: Annotations;
  /**
   * The resources of this template that `resources/list` shows after the static ones (a template
   * whose family is open-ended leaves it out). Called on every `resources/list`.
   */
  list?: (ctx: FeatureContext) => ResourceDefinition[] | Promise<ResourceDefinition[]>;
  /** Suggestions per template variable, for `completion/complete` with a `ref/resource`. */
  complete?: Readonly<Record<string, Completer>>;
}

/** Reads one resource of a template: the URI asked for and the variables it gave. */
export type TemplateReadHandler = (
  uri: string,
  variables: TemplateVariables,
  ctx: FeatureContext,
) => ResourceReadResult | Promise<ResourceReadResult>;

export interface RegisteredTemplate {
  definition: ResourceTemplateDefinition;
  /** The parsed template (the SDK's RFC 6570 implementation), compiled once. */
  template: UriTemplate;
  read: TemplateReadHandler;
}

/** Parses a definition's template; a malformed one fails the registration, not a later read. */
export function compileTemplate(definition: ResourceTemplateDefinition, read: TemplateReadHandler): RegisteredTemplate {
  return { definition, template: new UriTemplate(definition.uriTemplate), read };
}

/** The first template (in registration order) that `uri` matches, with the values of its variables. */
export function matchTemplate(
  templates: Iterable<RegisteredTemplate>,
  uri: string,
): { template: RegisteredTemplate; variables: TemplateVariables } | undefined {
  for (const template of templates) {
    let variables: TemplateVariables | null;
    try {
      variables = template.template.match(uri);
    } catch {
      variables = null; // the SDK refuses over-long URIs by throwing: no template matches them
    }
    if (variables) return { template, variables };
  }
  return undefined;
}

/** A template as `resources/templates/list` shows it (the gateway mirrors an upstream's listing with it too). */
export function describeTemplate({
  uriTemplate,
  name,
  title,
  description,
  mimeType,
  annotations,
}: Omit<ResourceTemplateDefinition, "list" | "complete">): ResourceTemplate {
  return {
    uriTemplate,
    name,
    ...(title !== undefined && { title }),
    ...(description !== undefined && { description }),
    ...(mimeType !== undefined && { mimeType }),
    ...(annotations !== undefined && { annotations }),
  };
}
