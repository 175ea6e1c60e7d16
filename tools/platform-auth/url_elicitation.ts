// Secrets (API keys, client secrets) and consent through MCP URL-mode
// elicitation (2025-11-25): the tool opens one of the daemon's pages
// (browser_pages.ts), asks the client to show it (`elicitation/create`, mode
// "url"), waits for the person, then tells the client
// (`notifications/elicitation/complete`) and finishes. A client without URL
// elicitation is given the page's address to pass on: the secret still never
// travels through the chat.

import {
  type CallContext,
  ElicitationUnsupported,
  ToolError,
} from "../kit/mod.ts";
import type { JsonValue } from "../../platform/store/mod.ts";
import { probeStoredKey, saveEnteredKey } from "./api_keys.ts";
import { saveEnteredClientSecret } from "./client_secrets.ts";
import type { FlowEnd } from "./authorization.ts";
import type { OpenedPage, PageEnd } from "./browser_pages.ts";
import type { PlatformAuthContext } from "./context.ts";
import type { PlatformRecord } from "./vault.ts";

/** How often a call waiting for the person reports progress (clients that reset their timeout on it keep waiting). */
const HEARTBEAT_MS = 10_000;

/** Whether this call's client takes URL-mode elicitations (only such a client can hear of their completion). */
export function elicitsUrls(call: CallContext): boolean {
  return call.elicitationComplete !== undefined;
}

/** A secret was asked for at a page no client showed: where it is. */
export interface PersonPage {
  enter_secret_at: string;
  page_expires_at: string;
}

/** The secrets the person may be asked for, and how each is checked and kept. */
const SECRETS = {
  api_key: { label: "API key", save: saveEnteredKey },
  client_secret: { label: "client secret", save: saveEnteredClientSecret },
} as const;

/**
 * Gets a secret of `platform` from the person: through URL elicitation
 * when the client takes it (waits until the secret is checked and saved),
 * else the page's address for the caller to pass on (the daemon saves the
 * secret when it is entered).
 */
export async function secretFromPerson(
  ctx: PlatformAuthContext,
  call: CallContext,
  platform: string,
  field: keyof typeof SECRETS,
  why: string,
): Promise<{ saved: true } | { saved: false; page: PersonPage }> {
  const { label, save } = SECRETS[field];
  // The page is the person's, but whoever holds its address can fill it in
  // first, and it would go to the caller's own client: an agent would enter
  // a secret of its choosing for everyone (authenticate touches nothing).
  if (call.caller.agent !== undefined) {
    throw new ToolError(
      `${why}. The ${label} of "${platform}" is entered by the operator, not through an agent's call: ` +
        `ask the operator to connect "${platform}" (authenticate from the operator's own MCP client, or Connect on agentd's dashboard)`,
    );
  }
  const page = ctx.pages.secret({
    platform,
    caller: call.caller,
    label,
    accept: (secret) => save(ctx.auth, platform, secret),
  });
  const shown: PersonPage = {
    enter_secret_at: page.url,
    page_expires_at: new Date(page.expiresAt).toISOString(),
  };
  if (!elicitsUrls(call)) return { saved: false, page: shown };
  const asked = await ask(
    call,
    page,
    `${why}: enter the ${label} of "${platform}" in agentd's page (not in the chat).`,
  );
  if (asked === "unsupported") return { saved: false, page: shown };
  const end = await waitForPerson(call, page.ended, () => page.close());
  if (end !== "completed") {
    throw new ToolError(
      `No ${label} was saved for "${platform}": ${ended(end)}`,
    );
  }
  await call.elicitationComplete?.(page.id);
  return { saved: true };
}

/**
 * A client-credentials platform without its secret (it cannot work
 * without): the person enters it first (the record as it is then). Other
 * grants go on without one, as public clients do; add_platform asked.
 */
export async function withClientSecret(
  ctx: PlatformAuthContext,
  call: CallContext,
  record: PlatformRecord,
): Promise<PlatformRecord> {
  if (
    record.grant !== "client_credentials" ||
    record.sealed.client_secret !== undefined
  ) {
    return record;
  }
  const why = `"${record.name}" has no client secret yet`;
  const asked = await secretFromPerson(
    ctx,
    call,
    record.name,
    "client_secret",
    why,
  );
  if (!asked.saved) {
    throw new ToolError(
      `${why}. Ask the person to enter it at ${asked.page.enter_secret_at} (agentd's own page, ` +
        `valid until ${asked.page.page_expires_at}; never paste it in the chat), then call authenticate again`,
    );
  }
  return await ctx.auth.require(record.name);
}

/**
 * authenticate for an api_key platform: the stored key when its probe
 * passes, else a new key from the person.
 */
export async function authenticateKey(
  ctx: PlatformAuthContext,
  call: CallContext,
  record: PlatformRecord,
): Promise<{ [key: string]: JsonValue }> {
  const stored = await probeStoredKey(ctx.auth, record);
  if (stored.ok) return stored.view;
  const asked = await secretFromPerson(
    ctx,
    call,
    record.name,
    "api_key",
    stored.reason,
  );
  if (!asked.saved) {
    const { enter_secret_at, page_expires_at } = asked.page;
    throw new ToolError(
      `${stored.reason}. Ask the person to enter the key at ${enter_secret_at} (agentd's own page, ` +
        `valid until ${page_expires_at}; never paste it in the chat), or fix it with add_platform`,
    );
  }
  const current = await ctx.auth.require(record.name);
  return {
    platform: record.name,
    method: "api_key",
    status: current.status,
    next: "The key the person entered passed the probe and is saved.",
  };
}

/**
 * authenticate for an authorization_code platform through URL elicitation:
 * the client shows agentd's one-time consent page, which hands the browser
 * to the provider; the call ends when the redirect came back.
 */
export async function consentInBrowser(
  ctx: PlatformAuthContext,
  call: CallContext,
  record: PlatformRecord,
): Promise<{ [key: string]: JsonValue }> {
  const flow = await ctx.flows.startBrowser(record, { open: false });
  const page = ctx.pages.consent({
    platform: record.name,
    caller: call.caller,
    redirect: flow.authorizationUrl,
  });
  const provider = new URL(flow.authorizationUrl).host;
  const asked = await ask(
    call,
    page,
    `Connect "${record.name}": agentd's page sends you to ${provider} to sign in and allow access.`,
  ).catch((error) => {
    ctx.flows.abandon(flow.state);
    throw error;
  });
  if (asked === "unsupported") return flow.result;
  // Ends with the flow; or with the page when it ends unused; or at the state's expiry.
  const unused = page.ended.then((end) =>
    end === "completed" ? new Promise<never>(() => {}) : end
  );
  const expiry = Promise.withResolvers<"expired">();
  const clock = ctx.auth.clock;
  const timer = clock.schedule(
    () => expiry.resolve("expired"),
    flow.expiresAt - clock.now(),
  );
  const end = await waitForPerson<FlowEnd | PageEnd>(
    call,
    Promise.race([flow.ended, unused, expiry.promise]),
    () => page.close(),
  ).finally(() => clock.cancel(timer));
  if (typeof end === "string") {
    page.close();
    ctx.flows.abandon(flow.state);
    throw new ToolError(`"${record.name}" was not connected: ${ended(end)}`);
  }
  if (!end.ok) {
    throw new ToolError(`"${record.name}" was not connected: ${end.message}`);
  }
  await call.elicitationComplete?.(page.id);
  return {
    platform: record.name,
    method: "oauth",
    grant: "authorization_code",
    status: "active",
    expires_at: end.result.expires_at ?? null,
    next: "Connected in the browser; get_token gives its access token.",
  };
}

/** Sends the URL elicitation; the page is closed unless the person accepted. */
async function ask(
  call: CallContext,
  page: OpenedPage,
  message: string,
): Promise<"accepted" | "unsupported"> {
  let answer;
  try {
    answer = await call.elicit({
      mode: "url",
      elicitationId: page.id,
      url: page.url,
      message,
    });
  } catch (error) {
    if (error instanceof ElicitationUnsupported) return "unsupported";
    page.close();
    throw error;
  }
  if (answer.action !== "accept") {
    page.close();
    throw new ToolError(
      `The person ${
        answer.action === "decline" ? "declined" : "dismissed"
      } agentd's page; nothing was entered there`,
    );
  }
  return "accepted";
}

/**
 * Waits for `ended`, reporting progress meanwhile; the call's cancel runs
 * `abandon` and ends the wait as "cancelled".
 */
async function waitForPerson<T>(
  call: CallContext,
  ended: Promise<T>,
  abandon: () => void,
): Promise<T | "cancelled"> {
  let beats = 0;
  const heartbeat = setInterval(() => {
    call.progress(++beats, undefined, "waiting for the person at agentd's page")
      .catch(() => {});
  }, HEARTBEAT_MS);
  const aborted = Promise.withResolvers<"cancelled">();
  const onAbort = () => {
    abandon();
    aborted.resolve("cancelled");
  };
  if (call.signal.aborted) onAbort();
  call.signal.addEventListener("abort", onAbort, { once: true });
  try {
    return await Promise.race([ended, aborted.promise]);
  } finally {
    clearInterval(heartbeat);
    call.signal.removeEventListener("abort", onAbort);
  }
}

function ended(end: PageEnd | "cancelled"): string {
  return end === "expired"
    ? "the page expired before the person used it (call again for a new one)"
    : "the person cancelled on the page, or the call was cancelled";
}
