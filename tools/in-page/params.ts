// Parameters every in-page tool shares.

import { z } from "zod";

export const tabParam = z.number().int().min(0).optional().describe(
  "Tab to act on: a tab_id from get_page_state's tabs list (default: the active tab)",
);

export const selectorParam = z.string().min(1).max(2000);
