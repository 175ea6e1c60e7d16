// The document around each page the daemon serves: platform/html_page.ts
// (servers' own pages use it too).

export { htmlPage } from "../platform/html_page.ts";
