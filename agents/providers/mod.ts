// Model providers: turns `<provider>/<name>`, or a bare model name placed by
// the default provider or a well-known prefix, into a Model speaking the
// provider's wire format. Keys are read from the environment when a model is
// resolved and registered with the logger as secrets right away. The wire
// formats and the HTTP endpoint (wire.ts) load on a model's first call: an
// idle daemon, or one whose agents never run, does not hold them.
import { AsyncLocalStorage } from "node:async_hooks";
import type { Logger } from "../../platform/log.ts";
import { lazy } from "../../platform/lazy.ts";
import { type Model, ModelNameError, type ModelResolver } from "../model.ts";
import {
  providerNames,
  type ProvidersConfig,
  resolveProvider,
} from "./config.ts";

export { ProviderConfig, ProvidersConfig } from "./config.ts";

/** Bare model names whose maker is plain from the name; the provider must still be configured or built in. */
export const WELL_KNOWN_PREFIXES: readonly {
  pattern: RegExp;
  label: string;
  provider: string;
}[] = [
  {
    pattern: /^(?:gpt-|chatgpt-|o[134](?:-|$))/i,
    label: "gpt-, chatgpt-, o1, o3, o4",
    provider: "openai",
  },
  { pattern: /^claude-/i, label: "claude-", provider: "anthropic" },
  // Ollama tags its models `name:tag` (llama3.2:3b, qwen2.5:7b).
  {
    pattern: /^[a-z0-9][\w.-]*:[\w.-]+$/i,
    label: "<name>:<tag>",
    provider: "ollama",
  },
];

export interface ModelResolverOptions {
  config: ProvidersConfig;
  env: Readonly<Record<string, string>>;
  log: Logger;
  /** Replaces fetch (tests inject network failures). */
  fetchFn?: typeof fetch;
  /** Provider of bare model names, asked before the well-known prefixes (`agents.default_provider`). */
  defaultProvider?: string;
}

/** Models kept per name: a resolver's config and environment never change. */
const MODELS_KEPT = 256;

export function createModelResolver(
  options: ModelResolverOptions,
): ModelResolver {
  const names = () => providerNames(options.config);
  // The wire formats load in the context the resolver was made in: loaded
  // inside a team run's first turn, they kept that run's async context, and
  // the team's next run was refused as "running this task already".
  const outside = AsyncLocalStorage.snapshot();
  // A turn resolves its agent's model: placing it and building its endpoint
  // (provider defaults, URL checks) once per name, not once per turn.
  const models = new Map<string, Model>();
  return {
    providers: names,
    resolve(model: string): Model {
      let resolved = models.get(model);
      if (resolved === undefined) {
        resolved = resolveModel(model, options, names, outside);
        if (models.size >= MODELS_KEPT) models.clear();
        models.set(model, resolved);
      }
      return resolved;
    },
  };
}

function resolveModel(
  model: string,
  options: ModelResolverOptions,
  names: () => string[],
  outside: <R>(fn: () => R) => R,
): Model {
  const { provider, name } = placeModel(model, options, names);
  const resolved = resolveProvider(provider, options);
  if (!resolved) {
    throw new ModelNameError(
      `Unknown provider "${provider}" in model "${model}"; providers: ${
        names().join(", ")
      } (add others under "providers" in the config)`,
    );
  }
  const explicit = `${provider}/${name}`;
  if (resolved.apiKey) options.log.addSecret(resolved.apiKey);
  let built: Promise<Model> | undefined;
  const wireModel = () =>
    built ??= outside(() =>
      lazy<typeof import("./wire.ts")>("./wire.ts", import.meta.url)
        .then(({ wireModel }) =>
          wireModel({
            id: explicit,
            name,
            provider,
            resolved,
            log: options.log,
            fetchFn: options.fetchFn ?? fetch,
          })
        )
    );
  return {
    id: explicit,
    complete: async (request, call) =>
      (await wireModel()).complete(request, call),
  };
}

/**
 * Splits `model` into provider and provider-side name: `<provider>/<name>`
 * when the part before the first slash is a provider; else a bare name, given
 * to the default provider, then to the provider its well-known prefix names.
 */
function placeModel(
  model: string,
  options: ModelResolverOptions,
  names: () => string[],
): { provider: string; name: string } {
  const slash = model.indexOf("/");
  const head = slash === -1 ? "" : model.slice(0, slash);
  const tail = slash === -1 ? "" : model.slice(slash + 1);
  if (!model.trim() || slash === 0 || (slash !== -1 && !tail.trim())) {
    throw new ModelNameError(
      `Invalid model "${model}": expected "<model>" or "<provider>/<model>", e.g. "gpt-4o-mini" or "openai/gpt-4o-mini"; providers: ${
        names().join(", ")
      }`,
    );
  }
  const known = (name: string) => resolveProvider(name, options) !== undefined;
  if (slash !== -1 && (known(head) || options.defaultProvider === undefined)) {
    return { provider: head, name: tail };
  }
  // A bare name, or one whose slash belongs to it (meta-llama/llama-3 on the default provider).
  if (options.defaultProvider !== undefined) {
    if (!known(options.defaultProvider)) {
      throw new ModelNameError(
        `agents.default_provider "${options.defaultProvider}" names no provider, so "${model}" has none; providers: ${
          names().join(", ")
        } (add it under "providers" in the config)`,
      );
    }
    return { provider: options.defaultProvider, name: model };
  }
  const prefix = WELL_KNOWN_PREFIXES.find((entry) => entry.pattern.test(model));
  if (prefix && known(prefix.provider)) {
    return { provider: prefix.provider, name: model };
  }
  const tried = [
    "agents.default_provider (not set)",
    ...WELL_KNOWN_PREFIXES.map((entry) =>
      `prefix ${entry.label} → ${entry.provider}`
    ),
  ];
  throw new ModelNameError(
    `No provider for model "${model}": tried ${
      tried.join("; ")
    }. Give "<provider>/${model}" with one of: ${
      names().join(", ")
    }, or set agents.default_provider`,
    tried,
  );
}
