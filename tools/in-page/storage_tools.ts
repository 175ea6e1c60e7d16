// Storage tools: cookies through chrome.cookies (http-only ones included),
// local and session storage of the tab's origin.

import { z } from "zod";
import { toolDefiner, ToolError } from "../kit/mod.ts";
import { ListedCookie } from "../../platform/cookies.ts";
import { isDaemonCookie } from "../../platform/daemon_origin.ts";
import { type InPage, jsonResult, withinBudget } from "./in_page.ts";
import { tabParam } from "./params.ts";
import type { JsonValue } from "../../platform/store/mod.ts";

const tool = toolDefiner<InPage>();

export const getCookies = tool({
  name: "get_cookies",
  title: "Read cookies",
  touches: ["cookies-storage"],
  description:
    "Cookies of a domain (default: the tab's current domain), from the user's own browser profile, http-only cookies included; subdomain cookies and parent-domain cookies sent to it are listed too.",
  input: z.object({
    domain: z.string().min(1).max(253).optional().describe(
      "Domain, e.g. example.com (default: the tab's)",
    ),
    tab_id: tabParam,
  }),
  output: z.object({
    domain: z.string().nullable(),
    count: z.number().int(),
    total: z.number().int(),
    cookies: z.array(ListedCookie),
    truncated: z.literal(true).optional(),
  }),
  annotations: { readOnlyHint: true },
  async handle(ctx, { domain, tab_id }, call) {
    const result = await ctx.act(call, "get_cookies", "cookies.get", {
      domain: domain?.trim().replace(/^https?:\/\//, "").replace(/\/.*$/, ""),
      tab_id,
    });
    const found = result.structuredContent ?? {};
    // The daemon's own session cookie never leaves: it would make the caller
    // the operator (any loopback host's cookies reach the daemon).
    const daemon = ctx.ownOrigin();
    const all = (Array.isArray(found.cookies) ? found.cookies : []).filter(
      (cookie) => !isDaemonCookie(cookieNameAndDomain(cookie), daemon),
    );
    const cookies = withinBudget(all, ctx.config.text_budget);
    return jsonResult({
      domain: found.domain ?? null,
      count: cookies.length,
      total: all.length,
      cookies,
      ...(cookies.length < all.length ? { truncated: true } : {}),
    });
  },
});

const cookieToSet = z.object({
  name: z.string().min(1).max(4096).describe("Cookie name"),
  value: z.string().max(4096).describe("Cookie value"),
  domain: z.string().min(1).max(253).describe(
    "Domain: example.com sets a host-only cookie, .example.com one sent to subdomains too",
  ),
  path: z.string().startsWith("/").max(1024).optional().describe(
    "Path (default /)",
  ),
}).strict();

export const setCookies = tool({
  name: "set_cookies",
  title: "Set cookies",
  touches: ["cookies-storage"],
  description:
    "Sets cookies in the user's browser profile (each: name, value, domain, path). They apply to every tab of that domain at once.",
  input: z.object({
    cookies: z.array(cookieToSet).min(1).max(100).describe("Cookies to set"),
  }),
  output: z.object({
    set: z.array(z.object({
      name: z.string(),
      domain: z.string(),
      path: z.string(),
      url: z.string(),
    })),
  }),
  annotations: { destructiveHint: true },
  handle(ctx, { cookies }, call) {
    const daemon = ctx.ownOrigin();
    const refused = cookies.filter((cookie) => isDaemonCookie(cookie, daemon));
    if (refused.length > 0) {
      throw new ToolError(
        `Refused: ${
          refused.map((cookie) => `"${cookie.name}" on ${cookie.domain}`).join(
            ", ",
          )
        } is agentd's own session cookie (its hosts get it whatever the port); ` +
          "no tool sets it. Nothing was set.",
      );
    }
    return ctx.act(call, "set_cookies", "cookies.set", {
      cookies: cookies.map((cookie) => ({
        ...cookie,
        path: cookie.path ?? "/",
      })),
    });
  },
});

function cookieNameAndDomain(
  cookie: JsonValue,
): { name: string; domain: string } {
  if (typeof cookie !== "object" || cookie === null || Array.isArray(cookie)) {
    return { name: "", domain: "" };
  }
  return {
    name: String(cookie.name ?? ""),
    domain: String(cookie.domain ?? ""),
  };
}

/** One key's value, or every entry (within the text budget). */
const StorageOut = z.object({
  url: z.string(),
  origin: z.string(),
  key: z.string().optional(),
  found: z.boolean().optional(),
  value: z.string().nullable().optional(),
  count: z.number().int().optional(),
  total: z.number().int().optional(),
  entries: z.record(z.string(), z.string()).optional(),
  truncated: z.boolean().optional(),
});

const keyParam = z.string().min(1).max(2048).optional().describe(
  "One key to read (default: every entry)",
);

export const getLocalStorage = tool({
  name: "get_local_storage",
  title: "Read local storage",
  touches: ["cookies-storage"],
  description: "localStorage of the tab's origin: every entry, or one key.",
  input: z.object({ key: keyParam, tab_id: tabParam }),
  output: StorageOut,
  annotations: { readOnlyHint: true },
  handle(ctx, { key, tab_id }, call) {
    return ctx.act(call, "get_local_storage", "storage.get", {
      area: "local",
      key,
      tab_id,
      max_chars: ctx.config.text_budget,
    });
  },
});

export const getSessionStorage = tool({
  name: "get_session_storage",
  title: "Read session storage",
  touches: ["cookies-storage"],
  description: "sessionStorage of the tab: every entry, or one key.",
  input: z.object({ key: keyParam, tab_id: tabParam }),
  output: StorageOut,
  annotations: { readOnlyHint: true },
  handle(ctx, { key, tab_id }, call) {
    return ctx.act(call, "get_session_storage", "storage.get", {
      area: "session",
      key,
      tab_id,
      max_chars: ctx.config.text_budget,
    });
  },
});
