// Which model providers exist and where they are: the `providers` config
// section plus built-in defaults (openai, anthropic, ollama, openrouter)
// read from the environment, so `openai/gpt-4o-mini` works with just
// OPENAI_API_KEY set.
import { z } from "zod";

export const PROVIDER_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

const positiveInt = z.number().int().positive();

export const ProviderConfig = z.strictObject({
  api: z.enum(["openai", "anthropic"]),
  base_url: z.url({
    protocol: /^https?$/,
    error: "expected an http(s) URL",
  }).optional(),
  /** Name of the environment variable holding the API key. */
  api_key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, {
    error: "expected an environment variable name",
  }).optional(),
  /** Longest wait for the provider's next bytes (headers, or the next streamed chunk). */
  timeout_ms: positiveInt.default(60000),
  /** Retries on 429, 5xx and network errors. */
  max_retries: z.number().int().min(0).max(10).default(3),
});
export type ProviderConfig = z.output<typeof ProviderConfig>;

export const ProvidersConfig = z.record(
  z.string().regex(PROVIDER_NAME_RE, {
    error: "provider names are 1-64 letters, digits, '.', '_' or '-'",
  }),
  ProviderConfig,
);
export type ProvidersConfig = z.output<typeof ProvidersConfig>;

export type ProviderApi = ProviderConfig["api"];

/** A provider with everything it needs read from config and env. */
export interface ResolvedProvider {
  name: string;
  api: ProviderApi;
  baseUrl: string;
  /** The variable the key is read from (for error messages). */
  keyEnv?: string;
  apiKey?: string;
  /** Why the provider cannot be called (missing key, bad URL); checked at call time. */
  problem?: string;
  timeoutMs: number;
  maxRetries: number;
}

interface Default {
  api: ProviderApi;
  baseUrl: string;
  keyEnv?: string;
  /** Hosted endpoints need a key; self-hosted ones (vLLM, llama.cpp, Ollama) usually do not. */
  keyRequired: boolean;
  /** Env var the base URL came from, for error messages. */
  baseUrlEnv?: string;
}

type Env = Readonly<Record<string, string>>;

function defaults(env: Env): Record<string, Default> {
  const openaiBase = env.OPENAI_BASE_URL;
  const anthropicBase = env.ANTHROPIC_BASE_URL;
  return {
    openai: {
      api: "openai",
      baseUrl: openaiBase || "https://api.openai.com/v1",
      baseUrlEnv: openaiBase ? "OPENAI_BASE_URL" : undefined,
      keyEnv: "OPENAI_API_KEY",
      keyRequired: !openaiBase,
    },
    anthropic: {
      api: "anthropic",
      baseUrl: anthropicBase || "https://api.anthropic.com",
      baseUrlEnv: anthropicBase ? "ANTHROPIC_BASE_URL" : undefined,
      keyEnv: "ANTHROPIC_API_KEY",
      keyRequired: true,
    },
    ollama: {
      api: "openai",
      baseUrl: `${ollamaOrigin(env.OLLAMA_HOST)}/v1`,
      baseUrlEnv: env.OLLAMA_HOST ? "OLLAMA_HOST" : undefined,
      keyRequired: false,
    },
    openrouter: {
      api: "openai",
      baseUrl: "https://openrouter.ai/api/v1",
      keyEnv: "OPENROUTER_API_KEY",
      keyRequired: true,
    },
  };
}

/**
 * OLLAMA_HOST as the ollama CLI reads it: `host`, `host:port`, `:port` or a
 * URL; port 11434 unless a scheme is given (then 80/443).
 */
export function ollamaOrigin(value: string | undefined): string {
  const raw = (value ?? "").trim();
  const schemeEnd = raw.indexOf("://");
  const scheme = schemeEnd === -1 ? "http" : raw.slice(0, schemeEnd);
  let rest = schemeEnd === -1 ? raw : raw.slice(schemeEnd + 3);
  const defaultPort = schemeEnd === -1
    ? "11434"
    : scheme === "https"
    ? "443"
    : "80";
  const slash = rest.indexOf("/");
  const path = slash === -1 ? "" : rest.slice(slash).replace(/\/+$/, "");
  rest = slash === -1 ? rest : rest.slice(0, slash);
  // `[::1]:11434`, `host:11434`, `host`, `:11434`
  const match = /^(\[[^\]]*\]|[^:]*)(?::(\d+))?$/.exec(rest);
  const host = match?.[1] || "127.0.0.1";
  const port = match?.[2] ?? defaultPort;
  return `${scheme}://${host}:${port}${path}`;
}

/** Names of the built-in and configured providers, sorted. */
export function providerNames(config: ProvidersConfig): string[] {
  return [...new Set([...Object.keys(defaults({})), ...Object.keys(config)])]
    .sort();
}

/**
 * Resolves one provider from config and env, or undefined when the name is
 * unknown. A configured entry overrides the built-in default of the same
 * name field by field (same api only), so `{ api: "openai", timeout_ms: 120000 }`
 * keeps OPENAI_BASE_URL and OPENAI_API_KEY.
 */
export function resolveProvider(
  name: string,
  options: { config: ProvidersConfig; env: Env },
): ResolvedProvider | undefined {
  const configured = Object.hasOwn(options.config, name)
    ? options.config[name]
    : undefined;
  const builtIn = Object.hasOwn(defaults({}), name)
    ? defaults(options.env)[name]
    : undefined;
  if (!configured && !builtIn) return undefined;

  const base = configured && builtIn?.api !== configured.api
    ? undefined
    : builtIn;
  const api = configured?.api ?? base?.api ?? "openai";
  const keyEnv = configured?.api_key_env ?? base?.keyEnv;
  // Naming a key variable means "this needs a key"; a self-hosted base URL means it may not.
  const keyRequired = configured?.api_key_env !== undefined ||
    (configured?.base_url === undefined && (base?.keyRequired ?? false));
  const baseUrl = configured?.base_url ?? base?.baseUrl ?? "";
  const apiKey = keyEnv ? options.env[keyEnv] || undefined : undefined;

  let problem: string | undefined;
  if (!validHttpUrl(baseUrl)) {
    const source = base?.baseUrlEnv ?? `providers.${name}.base_url`;
    problem =
      `Provider "${name}" is not configured: ${source} is not an http(s) URL`;
  } else if (keyRequired && !apiKey && keyEnv) {
    problem = `Provider "${name}" is not configured: set ${keyEnv} (the ${
      api === "anthropic" ? "Anthropic" : "API"
    } key for ${baseUrl}) in agentd's environment`;
  }
  return {
    name,
    api,
    baseUrl: baseUrl.replace(/\/+$/, ""),
    keyEnv,
    apiKey,
    problem,
    timeoutMs: configured?.timeout_ms ?? 60000,
    maxRetries: configured?.max_retries ?? 3,
  };
}

function validHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}
