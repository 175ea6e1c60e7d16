// Model providers: turns `<provider>/<name>` into a Model speaking the
// provider's wire format. Keys are read from the environment when a model is
// resolved and registered with the logger as secrets right away.
import type { Logger } from "../../platform/log.ts";
import type { Model, ModelResolver } from "../model.ts";
import { ANTHROPIC_VERSION, createAnthropicModel } from "./anthropic.ts";
import {
  providerNames,
  type ProvidersConfig,
  type ResolvedProvider,
  resolveProvider,
} from "./config.ts";
import { Endpoint } from "./http.ts";
import { createOpenAIModel } from "./openai.ts";

export { ProviderConfig, ProvidersConfig } from "./config.ts";

/** A model string that names no model: the API answers 400 when an agent is created with it. */
export class ModelNameError extends Error {
  override name = "ModelNameError";
}

export interface ModelResolverOptions {
  config: ProvidersConfig;
  env: Readonly<Record<string, string>>;
  log: Logger;
  /** Replaces fetch (tests inject network failures). */
  fetchFn?: typeof fetch;
}

export function createModelResolver(
  options: ModelResolverOptions,
): ModelResolver {
  const names = () => providerNames(options.config);
  return {
    providers: names,
    resolve(model: string): Model {
      const slash = model.indexOf("/");
      const provider = slash === -1 ? "" : model.slice(0, slash);
      const name = slash === -1 ? "" : model.slice(slash + 1);
      if (!provider || !name.trim()) {
        throw new ModelNameError(
          `Invalid model "${model}": expected "<provider>/<model>", e.g. "openai/gpt-4o-mini"; providers: ${
            names().join(", ")
          }`,
        );
      }
      const resolved = resolveProvider(provider, options);
      if (!resolved) {
        throw new ModelNameError(
          `Unknown provider "${provider}" in model "${model}"; providers: ${
            names().join(", ")
          } (add others under "providers" in the config)`,
        );
      }
      if (resolved.apiKey) options.log.addSecret(resolved.apiKey);
      const endpoint = new Endpoint({
        provider,
        baseUrl: resolved.baseUrl,
        headers: headers(resolved),
        timeoutMs: resolved.timeoutMs,
        maxRetries: resolved.maxRetries,
        log: options.log,
        fetchFn: options.fetchFn ?? fetch,
        secret: resolved.apiKey,
        problem: resolved.problem,
      });
      if (resolved.api === "anthropic") {
        return createAnthropicModel({ id: model, model: name, endpoint });
      }
      return createOpenAIModel({
        id: model,
        model: name,
        endpoint,
        maxTokensField:
          URL.parse(resolved.baseUrl)?.hostname === "api.openai.com"
            ? "max_completion_tokens"
            : "max_tokens",
      });
    },
  };
}

function headers(provider: ResolvedProvider): Record<string, string> {
  const out: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  if (provider.api === "anthropic") {
    out["anthropic-version"] = ANTHROPIC_VERSION;
    if (provider.apiKey) out["x-api-key"] = provider.apiKey;
  } else if (provider.apiKey) {
    out.authorization = `Bearer ${provider.apiKey}`;
  }
  return out;
}
