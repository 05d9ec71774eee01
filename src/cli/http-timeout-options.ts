import { InvalidArgumentError, Option } from "commander";
import {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  type HttpTimeouts,
} from "../http/http-timeouts.js";
import { positiveInt } from "./options.js";

/** The time limits on receiving a request (docs/limits.md), flags of `serve` and `gateway`. */
export interface HttpTimeoutFlags {
  headersTimeout: number;
  requestTimeout: number;
  keepAliveTimeout: number;
}

export function httpTimeoutOptions(): Option[] {
  return [
    new Option("--headers-timeout <ms>", "HTTP: a request's headers must arrive within this long (else 408 and the connection is closed)")
      .argParser(positiveInt)
      .default(DEFAULT_HEADERS_TIMEOUT_MS),
    new Option(
      "--request-timeout <ms>",
      "HTTP: a whole request, headers and body, must arrive within this long (else 408); responses and SSE streams are not cut by it",
    )
      .argParser(positiveInt)
      .default(DEFAULT_REQUEST_TIMEOUT_MS),
    new Option(
      "--keep-alive-timeout <ms>",
      "HTTP: an idle keep-alive connection is closed after this long (above a balancer's idle timeout in front of it)",
    )
      .argParser(positiveInt)
      .default(DEFAULT_KEEP_ALIVE_TIMEOUT_MS),
  ];
}

/** The flags as `serveHttp` options; a headers timeout longer than the request's is a usage error. */
export function httpTimeoutsFrom(flags: HttpTimeoutFlags): HttpTimeouts {
  if (flags.headersTimeout > flags.requestTimeout) {
    throw new InvalidArgumentError(
      `--headers-timeout (${flags.headersTimeout}) must not exceed --request-timeout (${flags.requestTimeout}): the request timeout counts the headers too`,
    );
  }
  return { headersTimeoutMs: flags.headersTimeout, requestTimeoutMs: flags.requestTimeout, keepAliveTimeoutMs: flags.keepAliveTimeout };
}
