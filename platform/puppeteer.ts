// The one import seam for puppeteer-core (the CDP client of the Browser
// port): every other file imports the library through here.

import puppeteer from "puppeteer-core";

export { puppeteer };
export type {
  Browser,
  CDPSession,
  Cookie,
  ElementHandle,
  HTTPRequest,
  Page,
  Protocol,
} from "puppeteer-core";
