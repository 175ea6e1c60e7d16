// The in-page server (svc-in-page): acts inside the user's own browser
// session (their logins, their tabs) through the companion extension, which
// reaches this server over `agentd native-host` and the relay.

import { defineServer } from "../kit/mod.ts";
import { TOOL_LISTINGS } from "./tool_listings.ts";
import { InPageConfig } from "./config.ts";
import { fillForm, getDom, getTextContent, waitForElement } from "./dom.ts";
import { InPage } from "./in_page.ts";
import { interceptNetwork } from "./network.ts";
import { executeJs, getAccessibilityTree, getPageState } from "./page.ts";
import {
  getCookies,
  getLocalStorage,
  getSessionStorage,
  setCookies,
} from "./storage.ts";

export { InPageConfig };

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
  // The seed's order.
  listings: TOOL_LISTINGS, // tools/list entries, generated: tools/tool_listings.ts
  tools: [
    getDom,
    executeJs,
    getPageState,
    getCookies,
    setCookies,
    getLocalStorage,
    getSessionStorage,
    waitForElement,
    getAccessibilityTree,
    interceptNetwork,
    fillForm,
    getTextContent,
  ],
  async start(deps) {
    const config = InPageConfig.parse(deps.config);
    const inPage = new InPage(config, {
      dataDir: deps.dataDir,
      log: deps.log,
      ownOrigin: deps.ownOrigin,
    });
    await inPage.relay.start();
    return {
      context: inPage,
      health: () => inPage.health(),
      stop: () => inPage.relay.stop(),
    };
  },
});
