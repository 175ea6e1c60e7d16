// Tool entries → names (ARCHITECTURE §5), and ids that sort by creation.

import assert from "node:assert/strict";
import { IdSource } from "../../agents/ids.ts";
import {
  type AvailableTool,
  resolveToolEntries,
} from "../../agents/tool_resolution.ts";
import { Invalid } from "../../agents/errors.ts";
import { gatewayName } from "../../tools/kit/tool_names.ts";

/** A tool as the gateway lists it: its gateway name, and the origin its `_meta` names. */
function listed(server: string, tool: string): AvailableTool {
  return {
    name: server === "gateway" ? tool : gatewayName(server, tool).name,
    server,
    tool,
  };
}

const LISTED = [
  listed("gateway", "list_servers"),
  listed("gateway", "route_tool_call"),
  listed("memory", "store_memory"),
  listed("memory", "search_memory"),
  listed("notes", "store_memory"),
  listed("browser-automation", "navigate"),
  listed("a2a", "send_message"),
];

Deno.test("tool entries: a shortened gateway name resolves by its server and by its bare tool name, from its origin", () => {
  const server = "a-very-long-upstream-name-for-shortening";
  const long = listed(server, "trigger-long-running-operation");
  assert.ok(long.name.length <= 64);
  assert.ok(!long.name.endsWith("trigger-long-running-operation"));
  const tools = [...LISTED, long, listed(server, "echo")];
  assert.deepEqual(
    resolveToolEntries(["trigger-long-running-operation"], tools),
    [long.name],
  );
  assert.deepEqual(resolveToolEntries([server], tools), [
    long.name,
    `${server}__echo`,
  ]);
});

Deno.test("tool entries: gateway names, unique bare names and server names resolve, in order, without duplicates", () => {
  assert.deepEqual(
    resolveToolEntries(
      ["navigate", "memory", "memory__store_memory", "gateway", "a2a"],
      LISTED,
    ),
    [
      "browser-automation__navigate",
      "memory__store_memory",
      "memory__search_memory",
      "list_servers",
      "route_tool_call",
      "a2a__send_message",
    ],
  );
});

Deno.test("tool entries: unknown and ambiguous entries are one 400 listing candidates for each", () => {
  assert.throws(
    () => resolveToolEntries(["store_memory", "serch_memory", "zzz"], LISTED),
    (error) => {
      assert.ok(error instanceof Invalid, "a 400 (invalid_request) at the API");
      assert.equal(error.kind, "invalid_request");
      assert.match(
        error.message,
        /"store_memory" is ambiguous \(did you mean memory__store_memory, notes__store_memory\?\)/,
      );
      assert.match(
        error.message,
        /"serch_memory" is unknown \(did you mean memory__search_memory/,
      );
      assert.match(error.message, /"zzz" is unknown\. Use a gateway name/);
      assert.deepEqual(Object(error.details).servers, [
        "a2a",
        "browser-automation",
        "gateway",
        "memory",
        "notes",
      ]);
      return true;
    },
  );
});

Deno.test("ids: prefixed ULIDs, increasing even within one millisecond", () => {
  const ids = new IdSource(() => 1_700_000_000_000);
  const made = Array.from({ length: 500 }, () => ids.next("agt"));
  assert.ok(made.every((id) => /^agt_[0-9A-HJKMNP-TV-Z]{26}$/.test(id)));
  assert.deepEqual([...made].sort(), made);
  assert.equal(new Set(made).size, made.length);
  const later = new IdSource(() => 1_700_000_000_001).next("agt");
  assert.ok(later > made[made.length - 1]);
});
