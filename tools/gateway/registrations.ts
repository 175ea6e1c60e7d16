// Registrations: servers added with register_server (or auto_register),
// checked and connected first, then kept in the store so they survive
// restarts and are shared by every daemon on that store.

import { messageOf } from "../../platform/errors.ts";
import type { Mutation, Store } from "../../platform/store/mod.ts";
import { ToolError } from "../kit/mod.ts";
import { UPSTREAM_NAME } from "./config.ts";
import { linkLocalTarget } from "./link_local.ts";
import { DeadlineExceeded } from "./deadlines.ts";
import type { Upstream, UpstreamTarget } from "./upstream.ts";

export interface Registration {
  name: string;
  url: string;
  tools: string[] | null;
  registered_at: string;
  /** The upstream's headers, sealed (credentials.ts); null without credentials. */
  credentials: string | null;
}

const REGISTRATIONS = ["registrations"] as const;
/** Only names of the gateway itself; `memory` etc. are taken once their peers are added. */
const RESERVED = new Set(["gateway"]);

/** Set in the same commit as every registration added or removed, by any daemon on the store. */
export const REGISTRATIONS_VERSION = ["registrations_version"] as const;

function bumpVersion(): Mutation {
  return {
    type: "set",
    key: [...REGISTRATIONS_VERSION],
    value: crypto.randomUUID(),
  };
}

export async function storedRegistrations(
  store: Store,
): Promise<Registration[]> {
  const registrations: Registration[] = [];
  let cursor: string | null = null;
  do {
    const page = await store.list(REGISTRATIONS, {
      cursor: cursor ?? undefined,
    });
    for (const entry of page.entries) {
      const value = entry.value;
      if (
        typeof value === "object" && value !== null &&
        !Array.isArray(value) && typeof value.name === "string" &&
        typeof value.url === "string"
      ) {
        registrations.push({
          name: value.name,
          url: value.url,
          tools: Array.isArray(value.tools)
            ? value.tools.filter((tool) => typeof tool === "string")
            : null,
          registered_at: String(value.registered_at ?? ""),
          credentials: typeof value.credentials === "string"
            ? value.credentials
            : null,
        });
      }
    }
    cursor = page.cursor;
  } while (cursor);
  return registrations;
}

/**
 * register_server's checks, then the server connected and its record saved
 * unless another daemon took the name meanwhile. The caller adds the
 * upstream; on any failure nothing is saved and the upstream is closed.
 */
export async function addRegistration(
  request: {
    name: string;
    url: string;
    tools: readonly string[] | undefined;
    /** Sent to the upstream (credentials); empty when none. */
    headers: Readonly<Record<string, string>>;
  },
  options: {
    store: Store;
    upstreams: ReadonlyMap<string, Upstream>;
    clock: () => number;
    /** `dns_timeout_ms`: the link-local check's DNS lookup. */
    dnsTimeoutMs: number;
    /** A registered upstream at `url`, neither connected nor added yet. */
    newUpstream(
      name: string,
      url: string,
      tools: readonly string[] | undefined,
      headers: Readonly<Record<string, string>>,
    ): Upstream;
    /** The headers sealed for the store. */
    seal(
      name: string,
      headers: Readonly<Record<string, string>>,
    ): Promise<string>;
  },
): Promise<{ upstream: Upstream; registration: Registration }> {
  const { name, url, tools, headers } = request;
  const { upstreams } = options;
  if (!UPSTREAM_NAME.test(name)) {
    throw new ToolError(
      `Invalid name "${name}": use 1-40 lower-case letters, digits, '-' or single '_'`,
    );
  }
  const member = upstreams.get(name) ?? groupMember(upstreams, name);
  if (RESERVED.has(name) || member) {
    throw new ToolError(
      `A server named "${name}" is already registered (${
        member?.source ?? "reserved"
      }). Unregister it first or pick another name.`,
    );
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ToolError(
      `Invalid url "${url}": give the server's streamable HTTP endpoint, e.g. http://127.0.0.1:3001/mcp`,
    );
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new ToolError(
      `Invalid url "${url}": only http and https MCP endpoints can be registered (stdio servers go in the config file)`,
    );
  }
  if (parsed.username !== "" || parsed.password !== "") {
    // The URL is listed; credentials go where they are sealed and hidden.
    throw new ToolError(
      "Invalid url: it carries a user name or password, which would be listed. " +
        "Give credentials as token or headers instead. Nothing was registered.",
    );
  }
  let linkLocal: string | undefined;
  try {
    linkLocal = await linkLocalTarget(parsed, {
      timeoutMs: options.dnsTimeoutMs,
    });
  } catch (error) {
    throw new ToolError(
      `Cannot register ${parsed.href}: ${
        messageOf(error)
      }, so whether it points at a link-local address is unknown. Nothing was registered.`,
    );
  }
  if (linkLocal !== undefined) {
    throw new ToolError(
      `Cannot register ${parsed.href}: ${linkLocal} (169.254.0.0/16, fe80::/10), where cloud ` +
        "metadata services answer and no MCP server does. Nothing was registered.",
    );
  }
  const same = [...upstreams.values()].find((upstream) =>
    upstream.target.kind === "http" && upstream.target.url === parsed.href
  );
  if (same) {
    throw new ToolError(
      `${parsed.href} is already registered as "${same.name}"`,
    );
  }
  const upstream = options.newUpstream(name, parsed.href, tools, headers);
  try {
    await upstream.connect();
  } catch (error) {
    await upstream.close();
    throw new ToolError(
      `Cannot reach an MCP server at ${parsed.href}: ${
        messageOf(error)
      }. Nothing was registered.`,
    );
  }
  if (tools) {
    const available = await upstream.allToolNames().catch(async (error) => {
      await upstream.close();
      throw new ToolError(
        `Cannot list the tools of ${parsed.href}: ${
          messageOf(error)
        }. Nothing was registered.`,
      );
    });
    const unknown = tools.filter((tool) => !available.includes(tool));
    if (unknown.length > 0) {
      await upstream.close();
      throw new ToolError(
        `${parsed.href} has no tool ${
          unknown.map((tool) => `"${tool}"`).join(", ")
        }. Its tools: ${available.join(", ")}. Nothing was registered.`,
      );
    }
  }
  let credentials: string | null = null;
  if (Object.keys(headers).length > 0) {
    try {
      credentials = await options.seal(name, headers);
    } catch (error) {
      await upstream.close();
      throw new ToolError(
        `Cannot seal the credentials: ${
          messageOf(error)
        }. Nothing was registered.`,
      );
    }
  }
  const record: Registration = {
    name,
    url: parsed.href,
    tools: tools ? [...tools] : null,
    registered_at: new Date(options.clock()).toISOString(),
    credentials,
  };
  const key = [...REGISTRATIONS, name];
  const committed = await options.store.commit({
    checks: [{ key, version: null }],
    mutations: [{ type: "set", key, value: { ...record } }, bumpVersion()],
  }).catch(async (error) => {
    await upstream.close();
    // A commit the store did not answer may still land once it answers.
    throw new ToolError(
      `Cannot save the registration: ${messageOf(error)}. ${
        error instanceof DeadlineExceeded
          ? "It may still be saved when the store answers (list_servers then shows it); else register again."
          : "Nothing was registered."
      }`,
    );
  });
  if (!committed.ok) {
    await upstream.close();
    throw new ToolError(
      `A server named "${name}" was just registered by another daemon sharing this store.`,
    );
  }
  return { upstream, registration: record };
}

/** The upstream `unregister_server` may remove, or a ToolError saying why not. */
export function registeredUpstream(
  upstreams: ReadonlyMap<string, Upstream>,
  name: string,
): Upstream {
  const upstream = upstreams.get(name);
  if (!upstream) {
    const registered = [...upstreams.values()]
      .filter((candidate) => candidate.source === "registered")
      .map((candidate) => candidate.name).sort();
    throw new ToolError(
      `No server named "${name}". Registered with register_server: ${
        registered.length ? registered.join(", ") : "none"
      }`,
    );
  }
  if (upstream.source !== "registered") {
    throw new ToolError(
      {
        builtin:
          `"${name}" is a built-in server; disable it with --servers instead.`,
        config:
          `"${name}" comes from the config file; remove it there and restart.`,
        discovered:
          `"${name}" was found by auto-discovery and leaves when it is no longer found; ` +
          `set discovery.auto_register to choose what is discovered.`,
      }[upstream.source],
    );
  }
  return upstream;
}

export async function removeRegistration(
  store: Store,
  name: string,
): Promise<void> {
  await store.commit({
    mutations: [
      { type: "delete", key: [...REGISTRATIONS, name] },
      bumpVersion(),
    ],
  });
}

export function httpTarget(
  url: string,
  headers: Readonly<Record<string, string>> = {},
): UpstreamTarget {
  return { kind: "http", url, headers, passThroughAuth: false };
}

/** An upstream of replica group `group`: a registration is its own group, never a replica of another. */
export function groupMember(
  upstreams: ReadonlyMap<string, Upstream>,
  group: string,
): Upstream | undefined {
  for (const upstream of upstreams.values()) {
    if (upstream.group === group) return upstream;
  }
  return undefined;
}
