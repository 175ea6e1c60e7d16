// inject_content_script: registers a script for match patterns through the
// extension that owns it (chrome.scripting.registerContentScripts), so it
// runs in matching pages only, with that extension's host permissions.

import { z } from "zod";
import {
  daemonMatchPatterns,
  daemonPageMatcher,
  matchPatternReachesDaemon,
} from "../../platform/daemon_origin.ts";
import { json, toolDefiner, ToolError } from "../kit/mod.ts";
import type { ExtensionBridge } from "./bridge.ts";
import { extensionId } from "./catalog.ts";

const tool = toolDefiner<ExtensionBridge>();

/** The files an extension ships to take scripts from the bridge (shipped in extension/). */
const RUNNER_FILE = "agentd_runner.js";
const MAIN_FILE = "agentd_main.js";

/** Chrome's match-pattern grammar: `<all_urls>` or scheme://host/path. */
const MATCH_PATTERN =
  /^(<all_urls>|(\*|https?|wss?|ftp|file):\/\/(\*|(\*\.)?[^/*:]+(:(\d+|\*))?)?\/.*)$/;

/** The mark of a runner that checks the daemon's pages itself (extension/agentd_runner.js). */
const RUNNER_CHECK = "agentd-daemon-check/1";

/** Daemon matchers kept in the extension's storage (several daemons may use one browser). */
const MAX_DAEMONS = 8;

/**
 * Runs in the service worker: stores the code (as data) and this daemon's
 * page matcher, then registers the runner for the patterns;
 * registerContentScripts only takes packaged files. Chrome's patterns take no
 * port, so the daemon's pages are kept out by the runner's own check; a
 * runner without it gets every host that reaches the daemon excluded (all
 * ports).
 */
const REGISTER = `async (a) => {
  if (!chrome.scripting) throw new Error("the extension lacks the 'scripting' permission (the browser's permission model applies)");
  if (!chrome.storage) throw new Error("the extension lacks the 'storage' permission, which the runner reads scripts from");
  const texts = {};
  for (const file of [a.runner, a.main]) {
    texts[file] = await fetch(chrome.runtime.getURL(file)).then((r) => r.ok ? r.text() : undefined, () => undefined);
    if (texts[file] === undefined) throw new Error("the extension does not ship " + file + " (the bridge's companion interface): registerContentScripts only runs files packaged in the extension");
  }
  const checked = texts[a.runner].includes(a.check);
  const key = "agentd_content_scripts";
  const daemonsKey = "agentd_daemon_pages";
  const items = await chrome.storage.local.get([key, daemonsKey]);
  const stored = items[key] ?? {};
  stored[a.id] = { code: a.code, matches: a.matches };
  const mine = JSON.stringify(a.daemon);
  const daemons = [a.daemon, ...(items[daemonsKey] ?? []).filter((d) => JSON.stringify(d) !== mine)].slice(0, a.maxDaemons);
  await chrome.storage.local.set({ [key]: stored, [daemonsKey]: daemons });
  const exclude = checked || a.exclude.length === 0 ? {} : { excludeMatches: a.exclude };
  if (exclude.excludeMatches) {
    // That runner hands over every stored script, so earlier registrations get the exclusion too.
    const earlier = (await chrome.scripting.getRegisteredContentScripts()).filter((s) => s.id.startsWith("agentd-"));
    if (earlier.length > 0) {
      await chrome.scripting.updateContentScripts(earlier.map((s) => ({ id: s.id, excludeMatches: [...new Set([...(s.excludeMatches ?? []), ...a.exclude])] })));
    }
  }
  await chrome.scripting.registerContentScripts([
    { id: a.id, matches: a.matches, ...exclude, js: [a.runner], runAt: "document_idle", world: "ISOLATED", persistAcrossSessions: true },
    { id: a.id + "-main", matches: a.matches, ...exclude, js: [a.main], runAt: "document_idle", world: "MAIN", persistAcrossSessions: true },
  ]);
  const granted = await chrome.permissions.getAll();
  return { registered: (await chrome.scripting.getRegisteredContentScripts({ ids: [a.id] })).length === 1, granted_origins: granted.origins ?? [], excluded: exclude.excludeMatches ?? [] };
}`;

export const injectContentScript = tool({
  name: "inject_content_script",
  title: "Inject content script",
  touches: ["page-script"],
  description:
    `Register JavaScript to run in pages matching the patterns, through the extension that owns it (chrome.scripting.registerContentScripts; needs its scripting and storage permissions, and it runs only where the extension has host permission). The extension must ship ${RUNNER_FILE} and ${MAIN_FILE} (the bridge's companion interface). Runs in the page's own world (its CSP applies) on each later load of a matching page; never in agentd's own pages (they carry the operator's dashboard session). Remove with execute_extension_action unregister_content_scripts (ids <script_id> and <script_id>-main).`,
  input: z.object({
    extension_id: extensionId,
    script: z.string().min(1).max(1_000_000).describe(
      "JavaScript source run in matching pages",
    ),
    matches: z.array(
      z.string().regex(MATCH_PATTERN, {
        message:
          "a match pattern is <all_urls> or scheme://host/path, e.g. http://127.0.0.1/*",
      }),
    ).min(1).max(100).describe(
      "Match patterns, e.g. https://*.example.com/* (no port: any port)",
    ),
  }),
  output: z.object({
    extension_id: z.string(),
    script_id: z.string(),
    matches: z.array(z.string()),
    run_at: z.literal("document_idle"),
    granted_origins: z.array(z.string()),
    excluded_matches: z.array(z.string()).optional(),
    note: z.string().optional(),
  }),
  handle(bridge, { extension_id, script, matches }) {
    return bridge.counted("inject_content_script", async () => {
      const browser = await bridge.browser();
      const id = `agentd-${crypto.randomUUID()}`;
      // Never in the daemon's own pages: they carry the operator's session.
      const daemon = bridge.ownOrigin();
      const reachesDaemon = matches.some((pattern) =>
        matchPatternReachesDaemon(pattern, daemon)
      );
      const reply = await bridge.evaluate(browser, extension_id, REGISTER, {
        id,
        code: script,
        matches,
        runner: RUNNER_FILE,
        main: MAIN_FILE,
        check: RUNNER_CHECK,
        daemon: { ...daemonPageMatcher(daemon) },
        maxDaemons: MAX_DAEMONS,
        exclude: reachesDaemon ? daemonMatchPatterns(daemon) : [],
      });
      if (
        typeof reply !== "object" || reply === null || Array.isArray(reply) ||
        reply.registered !== true
      ) {
        throw new ToolError(
          `extension ${extension_id} did not register the content script`,
        );
      }
      const excluded = Array.isArray(reply.excluded) ? reply.excluded : [];
      bridge.log.info("content_script_registered", {
        extension_id,
        script_id: id,
        matches,
        excluded,
        bytes: script.length,
      });
      return json({
        extension_id,
        script_id: id,
        matches,
        run_at: "document_idle",
        granted_origins: reply.granted_origins ?? [],
        ...(excluded.length > 0
          ? {
            excluded_matches: excluded,
            note:
              `The extension's ${RUNNER_FILE} does not check for agentd's own pages (they carry the operator's dashboard session), so every host that reaches agentd is excluded on all ports; ship the current ${RUNNER_FILE} from agentd's extension/ to run on other local ports.`,
          }
          : {}),
      });
    });
  },
});
