// Reading tools: text, HTML, links and cookies of the page.

import { ListedCookie } from "../../platform/cookies.ts";
import { isDaemonCookie } from "../../platform/daemon_origin.ts";
import { z } from "zod";
import type { JsonValue } from "../../platform/store/mod.ts";
import { json, toolDefiner } from "../kit/mod.ts";
import type { BrowserAutomation } from "./automation.ts";
import { resourceLink } from "./results.ts";
import {
  describeLinks,
  outerHtmlOf,
  type PageLink,
  textOf,
} from "./in_page.ts";
import { pagedText } from "./page_ops.ts";
import { findAll, findElement, SELECTOR_HELP } from "./selectors.ts";

const tool = toolDefiner<BrowserAutomation>();

/** pagedText's part of an answer: one page of the text and where the next starts. */
const paged = {
  text: z.string(),
  offset: z.number().int(),
  total_chars: z.number().int(),
  next_offset: z.number().int().nullable(),
};

const offsetParam = z.number().int().min(0).optional().describe(
  "Character offset to start from, to page through long results (next_offset of the previous call)",
);

export const getText = tool({
  name: "get_text",
  title: "Read page text",
  touches: [],
  description:
    "The visible text of the first element matching the selector (as rendered, with line breaks). Long text is paged: pass offset to continue.",
  input: z.object({
    selector: z.string().min(1).describe(
      `Element to read (body for the whole page): ${SELECTOR_HELP}`,
    ),
    offset: offsetParam,
  }),
  output: z.object({
    url: z.string(),
    selector: z.string(),
    matches: z.number().int(),
    ...paged,
  }),
  annotations: { readOnlyHint: true },
  handle(ctx, { selector, offset }, call) {
    return ctx.act(
      call,
      { tool: "get_text", log: { selector }, readOnly: true },
      async (page) => {
        const element = await findElement(
          page,
          selector,
          ctx.config.selector_timeout_ms,
        );
        const text = await element.evaluate(textOf);
        const matches = (await findAll(page, selector)).length;
        return pagedText(text, offset ?? 0, ctx.config.text_budget, {
          url: page.url(),
          selector,
          matches,
        });
      },
    );
  },
});

export const getHtml = tool({
  name: "get_html",
  title: "Read page HTML",
  touches: [],
  description:
    "The HTML of the first element matching the selector (outerHTML), or of the whole page without one. Long HTML is paged: pass offset to continue.",
  input: z.object({
    selector: z.string().min(1).optional().describe(
      `Element to read (default: the whole page): ${SELECTOR_HELP}`,
    ),
    offset: offsetParam,
  }),
  output: z.object({
    url: z.string(),
    selector: z.string().nullable(),
    // Over the budget: the whole HTML as a resource of the session.
    resource_uri: z.string().optional(),
    ...paged,
  }),
  annotations: { readOnlyHint: true },
  handle(ctx, { selector, offset }, call) {
    return ctx.act(
      call,
      { tool: "get_html", log: { selector: selector ?? null }, readOnly: true },
      async (page) => {
        const html = selector === undefined
          ? await page.content()
          : await (await findElement(
            page,
            selector,
            ctx.config.selector_timeout_ms,
          )).evaluate(outerHtmlOf);
        const meta = { url: page.url(), selector: selector ?? null };
        if (html.length <= ctx.config.text_budget || (offset ?? 0) > 0) {
          return pagedText(html, offset ?? 0, ctx.config.text_budget, meta);
        }
        // Over the budget: the whole HTML becomes a resource of the session.
        const stored = ctx.results.put(
          call,
          "page.html",
          "text/html",
          html,
        );
        const result = pagedText(html, 0, ctx.config.text_budget, {
          ...meta,
          resource_uri: stored.uri,
        });
        result.content.push(resourceLink(stored));
        return result;
      },
    );
  },
});

export const getLinks = tool({
  name: "get_links",
  title: "List links",
  touches: [],
  description:
    "The links (<a href>) on the page: text and absolute URL, in document order. Hidden links (not rendered, zero size, invisible) are left out unless include_hidden is true.",
  input: z.object({
    include_hidden: z.boolean().optional().describe(
      "Also list links a user cannot see (default false)",
    ),
  }),
  output: z.object({
    url: z.string(),
    count: z.number().int(),
    total: z.number().int(),
    hidden_left_out: z.number().int(),
    links: z.array(z.object({
      text: z.string(),
      href: z.string(),
      // With include_hidden only.
      visible: z.boolean().optional(),
    })),
    truncated: z.string().optional(),
  }),
  annotations: { readOnlyHint: true },
  handle(ctx, { include_hidden }, call) {
    return ctx.act(
      call,
      {
        tool: "get_links",
        log: { include_hidden: include_hidden ?? false },
        readOnly: true,
      },
      async (page) => {
        const all: PageLink[] = await page.$$eval("a[href]", describeLinks);
        const wanted = include_hidden
          ? all
          : all.filter((link) => link.visible);
        const links: { [key: string]: JsonValue }[] = [];
        let size = 0;
        for (const link of wanted) {
          const entry: { [key: string]: JsonValue } = include_hidden
            ? { ...link }
            : { text: link.text, href: link.href };
          size += JSON.stringify(entry).length;
          if (size > ctx.config.text_budget) break;
          links.push(entry);
        }
        const omitted = wanted.length - links.length;
        return json({
          url: page.url(),
          count: links.length,
          total: wanted.length,
          hidden_left_out: include_hidden ? 0 : all.length - wanted.length,
          links,
          ...(omitted > 0
            ? {
              truncated:
                `${omitted} more links left out to stay within ${ctx.config.text_budget} characters; read them with execute_js`,
            }
            : {}),
        });
      },
    );
  },
});

/** `https://a.example/x` or `.a.example` → `a.example`. */
function hostOf(domain: string): string {
  const trimmed = domain.trim().toLowerCase();
  if (trimmed.includes("://")) {
    try {
      return new URL(trimmed).hostname;
    } catch {
      // not a URL after all: use as given
    }
  }
  return trimmed.replace(/^\./, "");
}

/** Cookies of the domain, of its subdomains, and of parent domains sent to it. */
function cookieMatches(cookieDomain: string, domain: string): boolean {
  const cookie = cookieDomain.toLowerCase().replace(/^\./, "");
  return cookie === domain || cookie.endsWith(`.${domain}`) ||
    (cookieDomain.startsWith(".") && domain.endsWith(`.${cookie}`));
}

export const getCookies = tool({
  name: "get_cookies",
  title: "Read cookies",
  touches: ["cookies-storage"],
  description:
    "The browser's cookies (the profile's, shared by every tab), optionally only those of a domain: its own, its subdomains' and parent-domain cookies sent to it.",
  input: z.object({
    domain: z.string().min(1).optional().describe(
      "Domain to filter by, e.g. example.com (a URL works too)",
    ),
  }),
  output: z.object({
    domain: z.string().nullable(),
    count: z.number().int(),
    total: z.number().int(),
    cookies: z.array(ListedCookie),
  }),
  annotations: { readOnlyHint: true },
  handle(ctx, { domain }, call) {
    return ctx.act(
      call,
      {
        tool: "get_cookies",
        log: { domain: domain ?? null },
        readOnly: true,
        leavesPage: true,
      },
      async (page) => {
        const host = domain === undefined ? undefined : hostOf(domain);
        // Attached to the user's browser, the profile may hold the daemon's
        // dashboard session: it never leaves (platform/daemon_origin.ts).
        const daemon = ctx.ownOrigin();
        const cookies = (await page.browser().cookies()).filter((cookie) =>
          (host === undefined || cookieMatches(cookie.domain, host)) &&
          !isDaemonCookie(cookie, daemon)
        );
        const listed: { [key: string]: JsonValue }[] = [];
        let size = 0;
        for (const cookie of cookies) {
          const entry: { [key: string]: JsonValue } = {
            name: cookie.name,
            value: cookie.value,
            domain: cookie.domain,
            path: cookie.path,
            expires: cookie.expires > 0
              ? new Date(cookie.expires * 1000).toISOString()
              : null,
            http_only: cookie.httpOnly ?? false,
            secure: cookie.secure,
            same_site: cookie.sameSite ?? null,
          };
          size += JSON.stringify(entry).length;
          if (size > ctx.config.text_budget) break;
          listed.push(entry);
        }
        return json({
          domain: host ?? null,
          count: listed.length,
          total: cookies.length,
          cookies: listed,
        });
      },
    );
  },
});
