// Shared by the provider tests: a resolver pointed at a model server, with
// its log lines captured.
import assert from "node:assert/strict";
import type { z } from "zod";
import { createLogger, type Logger } from "../../../platform/log.ts";
import {
  createModelResolver,
  ProvidersConfig,
} from "../../../agents/providers/mod.ts";
import {
  type ModelRequest,
  type ModelResolver,
  ProviderError,
} from "../../../agents/model.ts";
import type { ModelServer } from "../model_server.ts";

export interface Harness {
  models: ModelResolver;
  log: Logger;
  /** Every log line written, as JSON text. */
  lines: string[];
}

export function harness(
  server: ModelServer | undefined,
  options: {
    /** Parsed with the ProvidersConfig schema, as the daemon's config would be. */
    config?: z.input<typeof ProvidersConfig>;
    env?: Record<string, string>;
    fetchFn?: typeof fetch;
  } = {},
): Harness {
  const lines: string[] = [];
  const log = createLogger({ level: "debug", sink: (l) => lines.push(l) });
  const models = createModelResolver({
    config: ProvidersConfig.parse(options.config ?? {}),
    env: { ...server?.env, ...options.env },
    log,
    fetchFn: options.fetchFn,
  });
  return { models, log, lines };
}

export const HELLO: Omit<ModelRequest, "model"> = {
  messages: [{ role: "user", content: "Hello?" }],
  tools: [],
};

/** Awaits a rejection that must be a ProviderError, and returns it. */
export async function providerError(
  promise: Promise<unknown>,
): Promise<ProviderError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ProviderError, `not a ProviderError: ${error}`);
    return error;
  }
  assert.fail("expected a ProviderError");
}

/** Collects streamed deltas. */
export function collector(): { deltas: string[]; onText: (d: string) => void } {
  const deltas: string[] = [];
  return { deltas, onText: (d) => deltas.push(d) };
}
