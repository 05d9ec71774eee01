import { Command } from "commander";
import { attachGateway, type Gateway } from "../gateway/gateway.js";
import { COMMAND_SUMMARIES } from "./command-summaries.js";
import { runServer, serverOptions, withServeAction, type ServeOptions } from "./serve-command.js";
import { gatewayConfigOf, upstreamOf, upstreamOptions, upstreamRunOptionsOf, type UpstreamFlags } from "./upstream-options.js";

interface GatewayOptions extends ServeOptions, UpstreamFlags {}

export function gatewayCommand(): Command {
  const command = serverOptions(new Command("gateway").description(COMMAND_SUMMARIES.gateway.description), upstreamOptions);
  return withServeAction<GatewayOptions>(command, async (opts) => {
    const upstream = upstreamOf(opts);
    const config = gatewayConfigOf(opts);
    const run = upstreamRunOptionsOf(opts, config, upstream);
    let gateway: Gateway | undefined;
    await runServer(opts, {
      register: async (app, logger) => {
        gateway = await attachGateway(app, { upstream, config, logger, timeoutMs: opts.upstreamTimeout, ...run });
      },
      close: async () => gateway?.close(),
    });
  });
}
