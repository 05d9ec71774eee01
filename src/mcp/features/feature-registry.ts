import type { RegisteredPrompt } from "./prompts.js";
import type { RegisteredTemplate } from "./resource-templates.js";
import type { RegisteredResource } from "./resources.js";

/** The lists a client can be told changed (`notifications/<kind>/list_changed`). */
export type ListKind = "tools" | "resources" | "prompts";

/**
 * What a server offers besides tools: static resources (by URI), resource templates (by URI
 * template), prompts (by name), each kept in registration order, which is the listing order.
 * Every change is announced to the listeners, which tell connected sessions.
 */
export class FeatureRegistry {
  readonly resources = new Map<string, RegisteredResource>();
  readonly templates = new Map<string, RegisteredTemplate>();
  readonly prompts = new Map<string, RegisteredPrompt>();
  private readonly listeners = new Set<(kind: ListKind) => void>();

  addResource(resource: RegisteredResource): void {
    const { uri } = resource.definition;
    if (this.resources.has(uri)) throw new Error(`Resource ${uri} is already registered`);
    this.resources.set(uri, resource);
    this.changed("resources");
  }

  addTemplate(template: RegisteredTemplate): void {
    const { uriTemplate } = template.definition;
    if (this.templates.has(uriTemplate)) throw new Error(`Resource template ${uriTemplate} is already registered`);
    this.templates.set(uriTemplate, template);
    this.changed("resources");
  }

  addPrompt(prompt: RegisteredPrompt): void {
    if (this.prompts.has(prompt.name)) throw new Error(`Prompt ${prompt.name} is already registered`);
    this.prompts.set(prompt.name, prompt);
    this.changed("prompts");
  }

  /** Removes the static resource of that URI, or else the template of that URI template. */
  removeResource(uriOrTemplate: string): boolean {
    const removed = this.resources.delete(uriOrTemplate) || this.templates.delete(uriOrTemplate);
    if (removed) this.changed("resources");
    return removed;
  }

  removePrompt(name: string): boolean {
    const removed = this.prompts.delete(name);
    if (removed) this.changed("prompts");
    return removed;
  }

  /** Whether there is anything for `resources/*`. */
  get hasResources(): boolean {
    return this.resources.size > 0 || this.templates.size > 0;
  }

  get hasPrompts(): boolean {
    return this.prompts.size > 0;
  }

  /** Whether anything can be completed: prompt arguments and template variables are what can. */
  get hasCompletions(): boolean {
    return this.prompts.size > 0 || this.templates.size > 0;
  }

  /** Calls `listener` after every change of a list (tools are announced by their owner); returns what stops it. */
  onChange(listener: (kind: ListKind) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Announces that a list changed. */
  changed(kind: ListKind): void {
    for (const listener of this.listeners) listener(kind);
  }
}
