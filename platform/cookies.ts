// A cookie as the get_cookies tools list it: browser-automation reads the
// profile through CDP, in-page through the companion extension, and both
// answer in this one shape.

import { z } from "zod";

export const ListedCookie = z.object({
  name: z.string(),
  value: z.string(),
  domain: z.string(),
  path: z.string(),
  /** ISO time; null for a session cookie. */
  expires: z.string().nullable(),
  http_only: z.boolean(),
  secure: z.boolean(),
  same_site: z.string().nullable(),
});
