// The browser automation server (svc-browser-automation): navigation,
// clicks, typing, forms, screenshots, scripts and cookies on Chromium or
// Chrome over CDP, attached to the user's browser or launched on demand.

import { defineServer, gatherTools, serviceRuntime } from "../kit/mod.ts";
import { resultsTemplate } from "../kit/session_results.ts";
import { TOOL_LISTINGS } from "./tool_listings.ts";
import { BrowserAutomation } from "./automation.ts";
import * as capture from "./capture_tools.ts";
import { BrowserAutomationConfig } from "./config.ts";
import * as interaction from "./interaction_tools.ts";
import * as navigation from "./navigation_tools.ts";
import * as reading from "./reading_tools.ts";
import * as script from "./script_tools.ts";
import { RESULT_PREFIX } from "./results.ts";
import * as snapshot from "./snapshot_tools.ts";

export { BrowserAutomationConfig };

/** tools/list order (tests/tools/browser-automation/seed_test.ts pins it), snapshot last; name every tool here. */
const ORDER = [
  "navigate",
  "screenshot",
  "click_element",
  "type_text",
  "get_text",
  "get_html",
  "get_links",
  "fill_form",
  "submit_form",
  "wait_for",
  "execute_js",
  "get_cookies",
  "scroll",
  "select_option",
  "snapshot",
];

export const browserAutomationServer = defineServer<BrowserAutomation>({
  id: "browser-automation",
  namespace: "svc-browser-automation",
  title: "Browser automation",
  version: "1.0.0",
  instructions:
    "Drives a Chromium/Chrome tab per MCP session: navigate, then read (get_text, get_html, get_links, " +
    "get_cookies, screenshot) and act (click_element, type_text, fill_form, submit_form, select_option, " +
    'scroll, wait_for, execute_js). Selectors are CSS, text=Visible text, role=button[name="Save"] ' +
    "or xpath=//expr. A failed call returns the reason, the page URL and a screenshot. Long text is " +
    "paged with offset.",
  config: BrowserAutomationConfig,
  listings: TOOL_LISTINGS, // tools/list entries, generated: tools/tool_listings.ts
  tools: gatherTools(ORDER, {
    navigation,
    capture,
    interaction,
    reading,
    script,
    snapshot,
  }),
  resourceTemplates: [
    resultsTemplate(RESULT_PREFIX, (automation) => automation.results, {
      title: "A big result of this session",
      description:
        "Page HTML over text_budget or a screenshot over image_budget, kept until the session ends (or its tab closes)",
    }),
  ],
  async start(deps) {
    const parsed = BrowserAutomationConfig.parse(deps.config);
    // The start phase launches the browser; a daemon hosting many
    // servers keeps it lazy so nobody pays for a browser nobody drives.
    const config = {
      ...parsed,
      launch_on_start: parsed.launch_on_start ?? deps.alone,
    };
    const automation = new BrowserAutomation(config, deps);
    await automation.start();
    deps.log.info("browser_automation_ready", {
      cdp_port: config.cdp_port,
      profile: config.profile,
      launch: config.launch_on_start ? "on_start" : "on_first_use",
      browser: automation.connection.state,
    });
    return serviceRuntime(automation, {
      // The session's tab and its result resources go with it.
      sessionClosed: (sessionId) =>
        automation.pages.release(`session:${sessionId}`),
    });
  },
});
