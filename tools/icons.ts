// The built-in servers' icons: one SVG per server and per tool group (a
// group is one `tools/<server>/<group>_tools.ts` module; the gateway's
// on-demand meta-tools are `on_demand`). Each is the server's colour with a
// white line glyph on a 24×24 grid; the registry gives them to the specs
// (ServerSpec.icons) and tools/kit/icons.ts serves them. A tool names its
// group (`ToolDef.group`, set by gatherTools): tests/routes/discovery_test.ts
// pins that every built-in tool's group has an icon here.

import type { ServerIcons } from "./kit/mod.ts";

/** An icon: `glyph` (SVG shapes, stroked white) on a rounded square of `colour`. */
function svg(colour: string, glyph: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" width="24" height="24"><rect width="24" height="24" rx="5" fill="${colour}"/><g fill="none" stroke="#fff" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round">${glyph}</g></svg>`;
}

const GLYPHS = {
  hub:
    '<circle cx="12" cy="12" r="2.5"/><circle cx="5.5" cy="6" r="1.5"/><circle cx="18.5" cy="6" r="1.5"/><circle cx="12" cy="19" r="1.5"/><path d="M10.2 10.3 6.6 7.1M13.8 10.3l3.6-3.2M12 14.5v3"/>',
  database:
    '<ellipse cx="12" cy="6.5" rx="6" ry="2.5"/><path d="M6 6.5v11c0 1.4 2.7 2.5 6 2.5s6-1.1 6-2.5v-11M6 12c0 1.4 2.7 2.5 6 2.5s6-1.1 6-2.5"/>',
  browser:
    '<rect x="4" y="5" width="16" height="14" rx="2"/><path d="M4 9h16M7 7h.01M9.5 7h.01"/>',
  puzzle:
    '<path d="M6 7h3.5a2 2 0 1 1 4 0H17v3.5a2 2 0 1 1 0 4V18H6v-3.5a2 2 0 1 0 0-4z"/>',
  code: '<path d="M9 8l-4 4 4 4M15 8l4 4-4 4M13 6l-2 12"/>',
  monitor:
    '<rect x="4" y="5" width="16" height="11" rx="1.5"/><path d="M9 19h6M12 16v3"/>',
  key:
    '<circle cx="8" cy="12" r="3.5"/><path d="M11.5 12H20M17 12v3M20 12v2"/>',
  camera:
    '<path d="M4 8.5A1.5 1.5 0 0 1 5.5 7H8l1.5-2h5L16 7h2.5A1.5 1.5 0 0 1 20 8.5v8a1.5 1.5 0 0 1-1.5 1.5h-13A1.5 1.5 0 0 1 4 16.5z"/><circle cx="12" cy="12.5" r="3"/>',
  pointer: '<path d="M7 4l10 6.5-4.5 1.2L15 17l-2 1-2.5-5.3L7 16z"/>',
  compass: '<circle cx="12" cy="12" r="8"/><path d="M15.5 8.5l-2 5-5 2 2-5z"/>',
  lines: '<path d="M5 7h14M5 11h14M5 15h10M5 19h7"/>',
  braces:
    '<path d="M9 4c-2 0-2 1-2 3v2c0 1.5-1 3-2 3 1 0 2 1.5 2 3v2c0 2 0 3 2 3M15 4c2 0 2 1 2 3v2c0 1.5 1 3 2 3-1 0-2 1.5-2 3v2c0 2 0 3-2 3"/>',
  tree:
    '<rect x="9" y="3.5" width="6" height="4" rx="1"/><rect x="3.5" y="16.5" width="6" height="4" rx="1"/><rect x="14.5" y="16.5" width="6" height="4" rx="1"/><path d="M12 7.5v4.5M6.5 16.5V12h11v4.5"/>',
  clipboard:
    '<rect x="6" y="5" width="12" height="15" rx="1.5"/><path d="M9.5 3.5h5v3h-5zM9 11h6M9 15h4"/>',
  file: '<path d="M7 3.5h7l4 4V20H7zM14 3.5V8h4"/>',
  keyboard:
    '<rect x="3" y="7" width="18" height="10" rx="1.5"/><path d="M6.5 10h.01M9.5 10h.01M12.5 10h.01M15.5 10h.01M8 14h8"/>',
  mouse:
    '<rect x="7" y="4" width="10" height="16" rx="5"/><path d="M12 7.5v3"/>',
  window:
    '<rect x="3.5" y="5" width="12" height="10" rx="1.5"/><path d="M8.5 15v3.5h12v-10H15.5"/>',
  bolt: '<path d="M13 3 6 13.5h5L10 21l8-11h-5z"/>',
  terminal:
    '<rect x="3.5" y="5" width="17" height="14" rx="1.5"/><path d="M7 10l3 2.5L7 15M12 15h4"/>',
  inject:
    '<path d="M4 12h9M10 8.5 13.5 12 10 15.5"/><rect x="14" y="5" width="6" height="14" rx="1.5"/>',
  servers:
    '<rect x="4.5" y="4.5" width="15" height="6" rx="1.5"/><rect x="4.5" y="13.5" width="15" height="6" rx="1.5"/><path d="M8 7.5h.01M8 16.5h.01"/>',
  search:
    '<circle cx="10.5" cy="10.5" r="5.5"/><path d="M14.5 14.5 19.5 19.5"/>',
  globe:
    '<circle cx="12" cy="12" r="8"/><path d="M4 12h16M12 4c2.5 2.5 3.5 5 3.5 8s-1 5.5-3.5 8c-2.5-2.5-3.5-5-3.5-8s1-5.5 3.5-8"/>',
  page:
    '<rect x="5" y="3.5" width="14" height="17" rx="1.5"/><path d="M8.5 8h7M8.5 12h7M8.5 16h4"/>',
  note: '<path d="M5 4.5h10l4 4v11H5zM8.5 11h7M8.5 15h5"/>',
  bubble:
    '<path d="M5 5.5h14a1 1 0 0 1 1 1v9a1 1 0 0 1-1 1h-8l-4 3.5v-3.5H5a1 1 0 0 1-1-1v-9a1 1 0 0 1 1-1z"/>',
  person:
    '<circle cx="12" cy="8.5" r="3.5"/><path d="M5.5 19.5c.8-3.5 3.4-5.5 6.5-5.5s5.7 2 6.5 5.5"/>',
  grid:
    '<rect x="4.5" y="4.5" width="6" height="6" rx="1"/><rect x="13.5" y="4.5" width="6" height="6" rx="1"/><rect x="4.5" y="13.5" width="6" height="6" rx="1"/><rect x="13.5" y="13.5" width="6" height="6" rx="1"/>',
};

type Glyph = keyof typeof GLYPHS;

function server(
  colour: string,
  glyph: Glyph,
  /** Each tool group's glyph, by group (its `<group>_tools.ts` module). */
  groups: Record<string, Glyph>,
): ServerIcons {
  return {
    svg: svg(colour, GLYPHS[glyph]),
    groups: Object.fromEntries(
      Object.entries(groups).map(([group, glyph]) => [group, {
        svg: svg(colour, GLYPHS[glyph]),
      }]),
    ),
  };
}

/** By server id. */
export const BUILTIN_ICONS: Readonly<Record<string, ServerIcons>> = {
  "browser-automation": server("#2563eb", "browser", {
    capture: "camera",
    interaction: "pointer",
    navigation: "compass",
    reading: "lines",
    script: "braces",
    snapshot: "tree",
  }),
  "extension-bridge": server("#7c3aed", "puzzle", {
    action: "bolt",
    cdp: "terminal",
    extension: "puzzle",
    inject: "inject",
  }),
  "in-page": server("#0891b2", "code", {
    dom: "tree",
    network: "globe",
    page: "page",
    storage: "database",
  }),
  "desktop-control": server("#475569", "monitor", {
    clipboard: "clipboard",
    file: "file",
    keyboard: "keyboard",
    mouse: "mouse",
    screen: "camera",
    window: "window",
  }),
  gateway: server("#4f46e5", "hub", {
    gateway: "servers",
    on_demand: "search",
  }),
  memory: server("#0d9488", "database", {
    entry: "note",
    conversation: "bubble",
    search: "search",
  }),
  "platform-auth": server("#b45309", "key", {
    authentication: "person",
    platform: "grid",
    token: "key",
  }),
};
