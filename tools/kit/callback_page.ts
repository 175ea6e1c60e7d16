// The page a browser gets at a server's callback path (ServerSpec.callbacks),
// the same wherever it is served: the daemon's HTTP face (routes/callbacks.ts)
// or a server's own loopback listener on stdio. Server-rendered, nothing
// loaded from outside, never cached; a form posts back to the same URL.

import { encodeBase64 } from "../../platform/base64.ts";
import { htmlPage } from "../../platform/html_page.ts";
import { sameOrigin } from "../../platform/http_guards.ts";
import type { BrowserRequest, CallbackForm, CallbackOutcome } from "./mod.ts";

/** A form post larger than this is refused (a secret is a few hundred bytes). */
const MAX_FORM_BYTES = 16 * 1024;

const STYLE =
  `body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#1b1f24}
h1{font-size:1.4rem}label{display:block;font-weight:600;margin:1.2rem 0 .3rem}
input[type=password]{width:100%;box-sizing:border-box;padding:.5rem;font:inherit}
button{margin:1rem .5rem 0 0;padding:.45rem 1.1rem;font:inherit}`;

/** The parameters of a browser's request (the query, or a POST's form) and the rest a handler may check. */
export async function browserRequest(
  request: Request,
): Promise<{ params: URLSearchParams; browser: BrowserRequest } | Response> {
  const url = new URL(request.url);
  const browser: BrowserRequest = {
    method: request.method === "POST" ? "POST" : "GET",
    query: url.searchParams,
    cookies: cookiesOf(request.headers.get("cookie")),
    sameOrigin: sameOrigin(request),
  };
  if (browser.method === "GET") return { params: url.searchParams, browser };
  const type = request.headers.get("content-type") ?? "";
  if (!type.toLowerCase().startsWith("application/x-www-form-urlencoded")) {
    await request.body?.cancel();
    return plain(
      415,
      "Send the page's form (application/x-www-form-urlencoded)",
    );
  }
  const body = await request.text();
  if (body.length > MAX_FORM_BYTES) return plain(413, "The form is too large");
  return { params: new URLSearchParams(body), browser };
}

/** The browser's answer: the page (title, message, form), or a redirect. */
export function callbackResponse(outcome: CallbackOutcome): Response {
  const headers = new Headers({
    // Never cached, never sent on: the URL may hold a code or a one-time id.
    "cache-control": "no-store",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
  });
  if (outcome.cookie !== undefined) {
    const { name, value, maxAgeS } = outcome.cookie;
    headers.append(
      "set-cookie",
      `${name}=${value}; Max-Age=${maxAgeS}; Path=/; HttpOnly; SameSite=Strict`,
    );
  }
  if (outcome.redirect !== undefined) {
    headers.set("location", outcome.redirect);
    return new Response(null, { status: 303, headers });
  }
  const nonce = encodeBase64(crypto.getRandomValues(new Uint8Array(16)));
  headers.set("content-type", "text/html; charset=utf-8");
  headers.set(
    "content-security-policy",
    `default-src 'none'; style-src 'nonce-${nonce}'; form-action 'self'; frame-ancestors 'none'`,
  );
  const body = `<h1>${escape(outcome.title)}</h1>
<p id="message">${escape(outcome.message)}</p>${
    outcome.form === undefined ? "" : formHtml(outcome.form)
  }`;
  return new Response(
    htmlPage({ title: escape(outcome.title), nonce, style: STYLE, body }),
    { status: outcome.status ?? (outcome.ok ? 200 : 400), headers },
  );
}

function formHtml(form: CallbackForm): string {
  const hidden = Object.entries(form.hidden).map(([name, value]) =>
    `<input type="hidden" name="${attribute(name)}" value="${
      attribute(value)
    }">`
  ).join("");
  const cancel = form.cancel === undefined
    ? ""
    : `<button type="submit" name="action" value="cancel" formnovalidate>${
      escape(form.cancel)
    }</button>`;
  return `
<form method="post" autocomplete="off">
<label for="secret">${escape(form.secret.label)}</label>
<input id="secret" name="${
    attribute(form.secret.name)
  }" type="password" required autocomplete="off" autofocus>${hidden}
<button type="submit" name="action" value="submit">${
    escape(form.submit)
  }</button>${cancel}
</form>`;
}

function plain(status: number, message: string): Response {
  return new Response(`${message}\n`, {
    status,
    headers: {
      "content-type": "text/plain; charset=utf-8",
      "cache-control": "no-store",
    },
  });
}

/** Text content: markup characters only (quotes stay readable). */
function escape(text: string): string {
  return text.replace(/[&<>]/g, (char) => `&#${char.charCodeAt(0)};`);
}

/** An attribute value (always double-quoted here). */
function attribute(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function cookiesOf(header: string | null): Record<string, string> {
  const cookies: Record<string, string> = {};
  for (const part of (header ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at <= 0) continue;
    const name = part.slice(0, at).trim();
    if (!Object.hasOwn(cookies, name)) {
      cookies[name] = part.slice(at + 1).trim();
    }
  }
  return cookies;
}
