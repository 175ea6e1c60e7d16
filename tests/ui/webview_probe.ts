// A window through ffi/webview.ts alone, for the FFI test: the page's script
// (injected with init) calls a bound function, which gets an answer back
// (webview_return), reports both, and closes the window (terminate).
//
//   deno run -A tests/ui/webview_probe.ts <report file>

import { SizeHint, Webview } from "../../ffi/webview.ts";

const [report] = Deno.args;
if (report === undefined) throw new Error("usage: webview_probe.ts <file>");
const view = new Webview();
view.title = "agentd webview probe";
view.setSize(480, 320, SizeHint.none);
const seen: unknown[] = [];
view.bind("agentdAdd", (a, b) => Number(a) + Number(b));
view.bind("agentdReport", (value) => {
  seen.push(value);
  Deno.writeTextFileSync(report, JSON.stringify(seen));
  view.terminate();
  return null;
});
view.init("window.__probe = 'init ran';");
view.setHtml(`<!doctype html><h1 style="color:#c00">probe</h1><script>
  window.agentdAdd(40, 2).then(
    (sum) => window.agentdReport({ sum, init: window.__probe, title: document.title }),
    (error) => window.agentdReport({ error: String(error) }),
  );
</script>`);
view.run();
view.destroy();
