// Builds the unpacked extension: each entry point bundled to one IIFE with
// `deno bundle`, plus the manifest and the popup page.
// Usage: deno run -A extension/build.ts [OUT_DIR]   (default dist/extension)

import { dirname, join, resolve } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";
import { bundleForBrowser } from "../platform/browser_bundle.ts";

const SOURCE = dirname(fromFileUrl(import.meta.url));
const ENTRIES = ["background", "content", "page_hooks", "popup"];
// agentd_runner.js and agentd_main.js run scripts the extension bridge
// registers (inject_content_script); registerContentScripts takes only
// packaged files.
const STATIC = [
  "manifest.json",
  "popup.html",
  "agentd_runner.js",
  "agentd_main.js",
];

export const DEFAULT_OUT = join(SOURCE, "..", "dist", "extension");

/** Builds into `outDir` (emptied first) and returns it. */
export async function buildExtension(
  outDir: string = DEFAULT_OUT,
): Promise<string> {
  const out = resolve(outDir);
  await Deno.remove(out, { recursive: true }).catch(() => {});
  await Deno.mkdir(out, { recursive: true });
  await Promise.all(ENTRIES.map(async (entry) => {
    const code = await bundleForBrowser(
      join(SOURCE, "src", `${entry}.ts`),
      `extension/src/${entry}.ts`,
    );
    await Deno.writeTextFile(join(out, `${entry}.js`), code);
  }));
  for (const file of STATIC) {
    await Deno.copyFile(join(SOURCE, file), join(out, file));
  }
  return out;
}

if (import.meta.main) {
  const out = await buildExtension(Deno.args[0] ?? DEFAULT_OUT);
  console.log(`Built the agentd extension into ${out}`);
}
