// Big results of a browser session (page HTML over text_budget, screenshots
// over image_budget), kept as MCP resources by the kit's SessionResults.

export {
  resourceLink,
  SessionResults,
  type StoredResult,
} from "../kit/session_results.ts";

export const RESULT_PREFIX = "agentd://browser-automation/results/";
