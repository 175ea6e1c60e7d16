// A local site for the snapshot tests and bench: a page of more than 500 KB
// of DOM with two look-alike buttons, an iframe and a panel, and a second
// page to navigate to.

export interface SnapshotSite {
  url: string;
  /** Size of the big page's HTML, in bytes. */
  bigBytes: number;
  [Symbol.asyncDispose](): Promise<void>;
}

const ROWS = 2600;

export function bigPage(): string {
  const rows = Array.from(
    { length: ROWS },
    (_, index) =>
      `<li class="row" data-index="${index}"><a href="#item-${index}">Item ${index}</a> ` +
      `<span>description of item ${index}, with some filler words to make the row realistic</span>` +
      `<input type="checkbox" aria-label="Select item ${index}"></li>`,
  ).join("\n");
  return `<!DOCTYPE html><html><head><title>Big page</title></head><body>
<h1>Catalogue</h1>
<p id="status">Waiting</p>
<button id="decoy" onclick="document.getElementById('status').textContent='Decoy pressed'">Press me too</button>
<button id="go" onclick="document.getElementById('status').textContent='Clicked!'">Press me</button>
<label>Your name <input id="name" type="text"></label>
<iframe src="/frame" title="Inner frame" width="300" height="80"></iframe>
<section id="panel" aria-label="Panel"><h2>Panel</h2><button>Panel action</button></section>
<a id="away" href="/other">Go elsewhere</a>
<ul>${rows}</ul>
</body></html>`;
}

/** A page of more than 2 MB of HTML, its last element a marker. */
export function hugePage(): string {
  const rows = Array.from(
    { length: 36_000 },
    (_, index) =>
      `<p>Paragraph ${index} of a huge page, long enough to add up</p>`,
  ).join("\n");
  return `<!DOCTYPE html><html><head><title>Huge</title></head><body>${rows}<p id="end">END-OF-HUGE-PAGE</p></body></html>`;
}

export function startSnapshotSite(): SnapshotSite {
  const big = bigPage();
  const huge = hugePage();
  const tall = `<!DOCTYPE html><html><body>${
    Array.from({ length: 150 }, (_, i) =>
      `<p style="color:hsl(${
        i * 7
      },70%,40%)">Line ${i} of a tall page, with words that render as pixels</p>`)
      .join("")
  }</body></html>`;
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    (request) => {
      const path = new URL(request.url).pathname;
      const html = (body: string) =>
        new Response(body, {
          headers: { "content-type": "text/html; charset=utf-8" },
        });
      if (path === "/big") return html(big);
      if (path === "/huge") return html(huge);
      if (path === "/tall") return html(tall);
      if (path === "/frame") {
        return html(
          "<!DOCTYPE html><html><body><button>Inside frame</button></body></html>",
        );
      }
      if (path === "/other") {
        return html(
          "<!DOCTYPE html><html><head><title>Other</title></head><body><p>Elsewhere</p></body></html>",
        );
      }
      return new Response("not found", { status: 404 });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    bigBytes: new TextEncoder().encode(big).length,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}
