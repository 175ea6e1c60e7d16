// The local web site the browser tests drive: a form that records what it
// receives, links visible and hidden, a long page, cookies, late elements.

const LONG_TEXT = Array.from(
  { length: 3000 },
  (_, i) => `Line ${String(i).padStart(4, "0")} of the long page.`,
).join("\n");

export const LONG_TEXT_CHARS = LONG_TEXT.length;

function html(
  title: string,
  body: string,
  extra: [string, string][] = [],
): Response {
  const headers = new Headers(extra);
  headers.set("content-type", "text/html; charset=utf-8");
  return new Response(
    `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`,
    { headers },
  );
}

const PAGES: Record<string, () => Response> = {
  "/": () =>
    html(
      "Home",
      `<h1 id="title">Welcome home</h1>
      <p id="intro">Plain   text <b>with bold</b> and a
      <a id="to-form" href="/form">form link</a>.</p>
      <nav>
        <a href="/one">One</a>
        <a href="/two" aria-label="Second page"><img alt="" width="10" height="10"></a>
        <a href="/hidden-display" style="display:none">Hidden by display</a>
        <a href="/hidden-visibility" style="visibility:hidden">Hidden by visibility</a>
        <a href="/zero" style="display:inline-block;width:0;height:0;overflow:hidden">Zero size</a>
      </nav>
      <div role="button" aria-label="Pretend button" id="pretend" onclick="this.textContent='pressed'">press</div>
      <button id="save" onclick="document.getElementById('status').textContent='saved'">Save</button>
      <p id="status">idle</p>`,
    ),
  "/form": () =>
    html(
      "Form",
      `<form id="signup" method="post" action="/submit">
        <input id="name" name="name" value="old">
        <input id="email" name="email" type="email">
        <textarea id="bio" name="bio"></textarea>
        <select id="plan" name="plan">
          <option value="free">Free tier</option>
          <option value="pro">Pro tier</option>
          <option value="team">Team tier</option>
        </select>
        <input id="terms" name="terms" type="checkbox" value="yes">
        <input id="size-s" name="size" type="radio" value="s" checked>
        <input id="size-l" name="size" type="radio" value="l">
        <input id="when" name="when" type="date">
        <button id="go" type="submit" name="via" value="button">Sign up</button>
      </form>
      <form id="required" method="post" action="/submit">
        <input id="must" name="must" required>
      </form>
      <p id="echo"></p>
      <script>
        document.getElementById("name").addEventListener("input", (e) => {
          document.getElementById("echo").textContent = "typed:" + e.target.value;
        });
      </script>`,
    ),
  "/tall": () =>
    html(
      "Tall",
      `<div style="height:3000px;background:linear-gradient(#fff,#00f)">top</div><p id="bottom">bottom</p>`,
    ),
  "/long": () => html("Long", `<pre id="long">${LONG_TEXT}</pre>`),
  "/late": () =>
    html(
      "Late",
      `<p id="early">early</p><script>
        setTimeout(() => {
          const p = document.createElement("p");
          p.id = "late";
          p.textContent = "arrived";
          document.body.append(p);
        }, 300);
      </script>`,
    ),
  "/cookies": () =>
    html("Cookies", `<p>cookies set</p>`, [
      ["set-cookie", "session=abc123; Path=/; HttpOnly"],
      ["set-cookie", "theme=dark; Path=/; Max-Age=3600"],
    ]),
};

export interface Site {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** Bodies of the form posts received, in order. */
  submissions: URLSearchParams[];
  close(): Promise<void>;
}

export function startSite(): Site {
  const submissions: URLSearchParams[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      const path = new URL(request.url).pathname;
      if (path === "/submit" && request.method === "POST") {
        const body = new URLSearchParams(await request.text());
        submissions.push(body);
        return html(
          "Thanks",
          `<p id="thanks">Thanks ${body.get("name") ?? "?"}</p>`,
        );
      }
      const page = PAGES[path];
      if (page) return page();
      return html("Other", `<p id="path">${path}</p>`);
    },
  );
  const port = server.addr.port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    submissions,
    close: () => server.shutdown(),
  };
}
