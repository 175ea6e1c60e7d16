// A resolved model's endpoint and wire format (Anthropic Messages or OpenAI
// chat completions): loaded on the model's first call (mod.ts).
import type { Logger } from "../../platform/log.ts";
import type { Model } from "../model.ts";
import { ANTHROPIC_VERSION, anthropicMessages } from "./anthropic.ts";
import type { ResolvedProvider } from "./config.ts";
import { Endpoint } from "./http.ts";
import { endpointModel } from "./endpoint_model.ts";
import { openAIChat } from "./openai.ts";

export function wireModel(options: {
  /** `<provider>/<name>`. */
  id: string;
  /** The provider-side name. */
  name: string;
  provider: string;
  resolved: ResolvedProvider;
  log: Logger;
  fetchFn: typeof fetch;
}): Model {
  const { id, name, provider, resolved } = options;
  const endpoint = new Endpoint({
    provider,
    baseUrl: resolved.baseUrl,
    headers: headers(resolved),
    timeoutMs: resolved.timeoutMs,
    maxRetries: resolved.maxRetries,
    log: options.log,
    fetchFn: options.fetchFn,
    secret: resolved.apiKey,
    problem: resolved.problem,
  });
  if (resolved.api === "anthropic") {
    return endpointModel({ id, model: name, endpoint }, anthropicMessages);
  }
  return endpointModel({
    id,
    model: name,
    endpoint,
    maxTokensField: URL.parse(resolved.baseUrl)?.hostname === "api.openai.com"
      ? "max_completion_tokens"
      : "max_tokens",
  }, openAIChat);
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
