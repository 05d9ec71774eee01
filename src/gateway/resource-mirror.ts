import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
import type { ReadResourceResult, ResourceTemplate } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../core/logger.js";
import type { Completer } from "../mcp/features/completer.js";
import type { FeatureContext } from "../mcp/features/feature-context.js";
import { describeTemplate } from "../mcp/features/resource-templates.js";
import { describeResource, type ResourcePart } from "../mcp/features/resources.js";
import type { TaskServer } from "../mcp/task-server.js";
import { upstreamCompleter } from "./upstream-completer.js";
import type { UpstreamConnection } from "./upstream-connection.js";
import { listAll } from "./upstream-lists.js";

/** An upstream read's contents as the parts a TaskServer read handler returns (each keeps its URI and type). */
function partsOf(result: ReadResourceResult): ResourcePart[] {
  return result.contents.map((content) => {
    const head = { uri: content.uri, ...(content.mimeType !== undefined && { mimeType: content.mimeType }) };
    return "text" in content && typeof content.text === "string"
      ? { ...head, text: content.text }
      : { ...head, blob: String((content as { blob?: unknown }).blob ?? "") };
  });
}

/**
 * The upstream's resources and resource templates as the gateway's: listed as the upstream lists
 * them (at start, after a restart, on `list_changed`), read through the upstream, template
 * variables completed by the upstream when it offers completions.
 */
export class ResourceMirror {
  private readonly mirrored = new Map<string, string>();

  constructor(
    private readonly app: TaskServer,
    private readonly upstream: UpstreamConnection,
  ) {}

  /** URIs some session of the gateway is subscribed to: subscribed upstream, again after a restart. */
  private readonly watched = new Set<string>();

  /** Forwards the gateway's sessions' subscriptions upstream (first subscriber in, last out). */
  forwardSubscriptions(logger: Logger): void {
    this.app.onResourceWatch((uri, watched) => {
      if (watched) this.watched.add(uri);
      else this.watched.delete(uri);
      void this.upstream
        .client()
        .then(async (client) => {
          if (!client.getServerCapabilities()?.resources?.subscribe) return;
          await (watched ? client.subscribeResource({ uri }) : client.unsubscribeResource({ uri }));
        })
        .catch((error: unknown) =>
          logger.warn(
            { upstream: this.upstream.name, uri, error: error instanceof Error ? error.message : String(error) },
            "forwarding a resource subscription upstream failed",
          ),
        );
    });
  }

  async sync(client: Client): Promise<void> {
    const capabilities = client.getServerCapabilities();
    if (!capabilities?.resources) return;
    if (capabilities.resources.subscribe) for (const uri of this.watched) await client.subscribeResource({ uri });
    const resources = await listAll(async (cursor) => {
      const page = await client.listResources(cursor === undefined ? {} : { cursor });
      return { items: page.resources, nextCursor: page.nextCursor };
    });
    const templates = await listAll(async (cursor) => {
      const page = await client.listResourceTemplates(cursor === undefined ? {} : { cursor });
      return { items: page.resourceTemplates, nextCursor: page.nextCursor };
    }).catch(() => [] as ResourceTemplate[]); // an upstream without templates may not answer the method
    const seen = new Set<string>();
    const read = (uri: string, ctx: FeatureContext) => this.read(uri, ctx);
    for (const resource of resources) {
      seen.add(resource.uri);
      if (this.unchanged(resource.uri, resource)) continue;
      this.app.resource(describeResource(resource), read);
    }
    for (const template of templates) {
      seen.add(template.uriTemplate);
      if (this.unchanged(template.uriTemplate, template)) continue;
      const complete: Record<string, Completer> = {};
      if (capabilities.completions) {
        for (const variable of new UriTemplate(template.uriTemplate).variableNames) {
          complete[variable] = upstreamCompleter(this.upstream, { type: "ref/resource", uri: template.uriTemplate }, variable);
        }
      }
      this.app.resourceTemplate({ ...describeTemplate(template), complete }, (uri, _variables, ctx) => this.read(uri, ctx));
    }
    for (const key of [...this.mirrored.keys()]) {
      if (seen.has(key)) continue;
      this.app.removeResource(key);
      this.mirrored.delete(key);
    }
  }

  /** Whether `key` is mirrored as `item` already; a changed one is removed, to be registered anew. */
  private unchanged(key: string, item: unknown): boolean {
    const json = JSON.stringify(item);
    const before = this.mirrored.get(key);
    if (before === json) return true;
    if (before !== undefined) this.app.removeResource(key);
    this.mirrored.set(key, json);
    return false;
  }

  private async read(uri: string, ctx: FeatureContext): Promise<ResourcePart[]> {
    const client = await this.upstream.client();
    return partsOf(await client.readResource({ uri }, { signal: ctx.signal }));
  }
}
