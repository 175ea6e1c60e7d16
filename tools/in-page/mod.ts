// The in-page server (svc-in-page): acts inside the user's own browser
// session (their logins, their tabs) through the companion extension, which
// reaches this server over `agentd native-host` and the relay.

import { defineServer, gatherTools } from "../kit/mod.ts";
import { TOOL_LISTINGS } from "./tool_listings.ts";
import { InPageConfig } from "./config.ts";
import * as dom from "./dom_tools.ts";
import { InPage } from "./in_page.ts";
import * as network from "./network_tools.ts";
import * as page from "./page_tools.ts";
import * as storage from "./storage_tools.ts";

export { InPageConfig };

/** tools/list order (tests/tools/in-page/seed_test.ts pins it); name every tool here. */
const ORDER = [
  "get_dom",
  "execute_js",
  "get_page_state",
  "get_cookies",
  "set_cookies",
  "get_local_storage",
  "get_session_storage",
  "wait_for_element",
  "get_accessibility_tree",
  "intercept_network",
  "fill_form",
  "get_text_content",
];

export const inPageServer = defineServer<InPage>({
  id: "in-page",
  namespace: "svc-in-page",
  title: "In-page (companion extension)",
  version: "1.0.0",
  instructions:
    "Acts inside the user's own browser through the agentd companion extension: read the DOM, text, " +
    "storage, cookies and accessibility tree, fill fields, run scripts in the page, wait for elements " +
    "and log network requests. Every tool takes an optional tab_id (from get_page_state's tabs list); " +
    "without one it acts on the active tab. When the extension is not connected, calls wait briefly, " +
    "then fail saying how to connect it.",
  config: InPageConfig,
  listings: TOOL_LISTINGS, // tools/list entries, generated: tools/tool_listings.ts
  tools: gatherTools(ORDER, { dom, page, storage, network }),
  async start(deps) {
    const config = InPageConfig.parse(deps.config);
    const inPage = new InPage(config, deps);
    await inPage.relay.start();
    return {
      context: inPage,
      health: () => inPage.health(),
      stop: () => inPage.relay.stop(),
    };
  },
});
