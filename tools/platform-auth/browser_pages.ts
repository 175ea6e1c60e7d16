// The daemon's pages for MCP URL-mode elicitation (2025-11-25): where the
// person enters a secret (an API key) or starts a consent, instead of the
// chat. Each page has a one-time, unguessable id bound to the call and the
// caller that asked, and expires. A secret page belongs to the first browser
// that opens it (an HttpOnly cookie, echoed as the form's token), takes its
// form only from its own origin, and hands the secret straight to the
// waiting handler: it is never kept, logged, returned or audited.

import type { BrowserRequest, CallbackOutcome } from "../kit/mod.ts";
import type { Caller } from "../../platform/identity.ts";
import { messageOf } from "../../platform/errors.ts";
import type { Clock } from "./clock.ts";

/** The path the pages are served at (the daemon's face, or the stdio loopback). */
export const PAGE_PATH = "/platform-auth/elicitation";

/** How a page ended, for the call waiting on it. */
export type PageEnd = "completed" | "cancelled" | "expired";

/** What the handler of a secret says about one the person entered. */
export interface SecretVerdict {
  ok: boolean;
  /** Shown on the page: saved, or why not (never the secret). */
  message: string;
}

interface PageCommon {
  id: string;
  platform: string;
  /** Who asked, as the page names them. */
  asker: string;
  expiresAt: number;
  ended: PromiseWithResolvers<PageEnd>;
}

interface SecretPage extends PageCommon {
  kind: "secret";
  /** The field's label ("API key"). */
  label: string;
  /** Set by the first browser to open the page: its cookie and form token. */
  claim?: string;
  busy: boolean;
  accept(secret: string): Promise<SecretVerdict>;
}

interface ConsentPage extends PageCommon {
  kind: "consent";
  /** The provider's authorization URL the page hands the browser to. */
  redirect: string;
}

type Page = SecretPage | ConsentPage;

/** One opened page: its address and how it ends. */
export interface OpenedPage {
  id: string;
  url: string;
  expiresAt: number;
  /** Settles when the page is used up, cancelled, expired or closed. */
  ended: Promise<PageEnd>;
  /** Ends the page now (the call went away, the person declined). */
  close(): void;
}

/** Longest secret the form takes. */
const MAX_SECRET = 8192;

export class BrowserPages {
  readonly #pages = new Map<string, Page>();

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs: () => number,
    /** Where the person's browser reaches this process (the daemon, or the stdio loopback). */
    private readonly origin: () => string,
  ) {}

  get openCount(): number {
    return this.#pages.size;
  }

  /** A page asking the person for one secret of `platform`. */
  secret(options: {
    platform: string;
    caller: Caller;
    label: string;
    accept(secret: string): Promise<SecretVerdict>;
  }): OpenedPage {
    return this.#open({
      kind: "secret",
      label: options.label,
      busy: false,
      accept: options.accept,
      ...this.#common(options.platform, options.caller),
    });
  }

  /** A page that sends the person to the provider's consent screen once. */
  consent(options: {
    platform: string;
    caller: Caller;
    redirect: string;
  }): OpenedPage {
    return this.#open({
      kind: "consent",
      redirect: options.redirect,
      ...this.#common(options.platform, options.caller),
    });
  }

  /** Ends every page (shutdown): the calls waiting on them see `cancelled`. */
  stop(): void {
    for (const page of this.#pages.values()) this.#end(page, "cancelled");
  }

  /** The browser at PAGE_PATH: the form, its post, or the hand-off to the provider. */
  async answer(browser: BrowserRequest, form: URLSearchParams): Promise<
    CallbackOutcome
  > {
    this.#sweep();
    const id = browser.query.get("id") ?? "";
    const page = this.#pages.get(id);
    if (page === undefined) {
      return {
        ok: false,
        status: 404,
        title: "Nothing waiting here",
        message:
          "No request is waiting at this address: it was used already, it expired, or it belongs to another agentd. " +
          "Ask the agent to try again.",
      };
    }
    if (page.kind === "consent") {
      if (browser.method !== "GET") return refused(405, "Open this page");
      // One use: the provider's state is one-time too.
      this.#end(page, "completed");
      return {
        ok: true,
        title: `Connect ${page.platform}`,
        message: "Continuing to the provider's consent screen.",
        redirect: page.redirect,
      };
    }
    const cookie = cookieName(page.id);
    const held = browser.cookies[cookie];
    if (browser.method === "GET") {
      if (page.claim !== undefined && held !== page.claim) {
        return refused(
          409,
          "This page is already open in another browser. Ask the agent to try again for a new one.",
        );
      }
      page.claim ??= token();
      return {
        ...this.#form(page, "", 200),
        cookie: {
          name: cookie,
          value: page.claim,
          maxAgeS: Math.max(
            1,
            Math.ceil((page.expiresAt - this.clock.now()) / 1000),
          ),
        },
      };
    }
    // A post: from this page's origin, in the browser that opened it, with its token.
    if (
      !browser.sameOrigin || page.claim === undefined ||
      held !== page.claim || form.get("token") !== page.claim
    ) {
      return refused(
        403,
        "This form does not belong to this page (another browser, another origin or another request); nothing was saved.",
      );
    }
    if (form.get("action") === "cancel") {
      this.#end(page, "cancelled");
      return {
        ok: true,
        title: "Cancelled",
        message:
          `Nothing was saved for ${page.platform}. You can close this window.`,
      };
    }
    const secret = form.get("secret") ?? "";
    if (secret.length === 0 || secret.length > MAX_SECRET) {
      return this.#form(
        page,
        `Enter the ${page.label} (1 to ${MAX_SECRET} characters).`,
        400,
      );
    }
    if (page.busy) return refused(409, "The key is being checked already.");
    page.busy = true;
    let verdict: SecretVerdict;
    try {
      verdict = await page.accept(secret);
    } catch (error) {
      verdict = { ok: false, message: messageOf(error) };
    } finally {
      page.busy = false;
    }
    if (!verdict.ok) return this.#form(page, verdict.message, 400);
    this.#end(page, "completed");
    return {
      ok: true,
      title: "Saved",
      message: `${verdict.message} You can close this window.`,
    };
  }

  #common(platform: string, caller: Caller): PageCommon {
    return {
      id: token(),
      platform,
      asker: caller.agent === undefined
        ? "the operator's MCP client"
        : `agent "${caller.agent}"`,
      expiresAt: this.clock.now() + this.ttlMs(),
      ended: Promise.withResolvers<PageEnd>(),
    };
  }

  #open(page: Page): OpenedPage {
    this.#sweep();
    this.#pages.set(page.id, page);
    const url = new URL(PAGE_PATH, this.origin());
    url.searchParams.set("id", page.id);
    // The waiting call hears of the expiry even if nobody opens the page.
    const timer = this.clock.schedule(
      () => this.#end(page, "expired"),
      page.expiresAt - this.clock.now(),
    );
    page.ended.promise.finally(() => this.clock.cancel(timer));
    return {
      id: page.id,
      url: url.href,
      expiresAt: page.expiresAt,
      ended: page.ended.promise,
      close: () => this.#end(page, "cancelled"),
    };
  }

  #form(page: SecretPage, problem: string, status: number): CallbackOutcome {
    const intro =
      `${page.asker} asks for the ${page.label} of the platform "${page.platform}". ` +
      "It goes straight to agentd's encrypted store: not to the chat, the agent or any log.";
    return {
      ok: status < 400,
      status,
      title: `${page.label} for ${page.platform}`,
      message: problem === "" ? intro : `${problem} ${intro}`,
      form: {
        secret: { name: "secret", label: page.label },
        hidden: { token: page.claim ?? "" },
        submit: "Save",
        cancel: "Cancel",
      },
    };
  }

  #end(page: Page, how: PageEnd): void {
    this.#pages.delete(page.id);
    page.ended.resolve(how);
  }

  #sweep(): void {
    const now = this.clock.now();
    for (const page of this.#pages.values()) {
      if (page.expiresAt <= now) this.#end(page, "expired");
    }
  }
}

function refused(status: number, message: string): CallbackOutcome {
  return { ok: false, status, title: "Refused", message };
}

/** 32 random bytes in hex. */
function token(): string {
  return Array.from(
    crypto.getRandomValues(new Uint8Array(32)),
    (byte) => byte.toString(16).padStart(2, "0"),
  ).join("");
}

/** The page's own cookie: several pages may be open in one browser. */
function cookieName(id: string): string {
  return `agentd_page_${id.slice(0, 12)}`;
}
