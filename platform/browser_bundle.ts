// Browser code bundled at build time: the extension's entry points
// (extension/build.ts) and the pages' scripts (web/build.ts).

/**
 * `source` bundled by `deno bundle` to one IIFE for the browser: its code.
 * `label` names the source in the error when it does not bundle.
 */
export async function bundleForBrowser(
  source: string,
  label: string,
  cwd?: string,
): Promise<string> {
  const result = await new Deno.Command(Deno.execPath(), {
    args: ["bundle", "--quiet", "--platform=browser", "--format=iife", source],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  if (!result.success) {
    throw new Error(`Cannot bundle ${label}: ${decoder.decode(result.stderr)}`);
  }
  return decoder.decode(result.stdout);
}
