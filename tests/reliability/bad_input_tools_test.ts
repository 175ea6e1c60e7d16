// Property-based bad input for every tool of every built server (from
// tools/registry.ts, so servers merged later are covered without edits), in
// process and through the gateway's `<server>__<tool>` names: hostile
// arguments are an `isError` result naming what is wrong (or a JSON-RPC
// error), never a throw or a hang, and the store is unchanged.

import assert from "node:assert/strict";
import fc from "fast-check";
import { startServers } from "../../cli/boot.ts";
import { readBaseConfig } from "../../platform/config.ts";
import { Client, McpError } from "../../platform/mcp_sdk.ts";
import { MemoryStore } from "../../platform/store/memory.ts";
import type { HostedServer } from "../../tools/kit/host.ts";
import { connectInProcess } from "../../tools/kit/transport/sdk_server.ts";
import type { ToolDef } from "../../tools/kit/mod.ts";
import { loadBuiltinServers } from "../../tools/registry.ts";
import { capturedLog } from "../helpers.ts";
import { dumpStore, nastyObject, sized } from "./bad_values.ts";

/** Servers whose handlers may run on generated args that happen to be valid (store only, no browser or network). */
const EXECUTABLE = new Set(["memory"]);
const CALL_TIMEOUT_MS = 15_000;

interface Target {
  server: HostedServer;
  def: ToolDef<unknown>;
}

async function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`hang: ${what} gave no answer`)),
          CALL_TIMEOUT_MS,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

async function startAll() {
  const { log, logs } = capturedLog("debug");
  const dataDir = await Deno.makeTempDir({ prefix: "agentd-fuzz-" });
  const store = new MemoryStore();
  const hosts = await startServers(await loadBuiltinServers(), {
    store,
    log,
    settings: { base: readBaseConfig({}), values: {}, origin: {}, dataDir },
    env: {},
  });
  const clients = new Map<string, Client>();
  for (const host of hosts) {
    const client = new Client({ name: "fuzz", version: "1" });
    await client.connect(await connectInProcess(host, { agent: "fuzzer" }));
    clients.set(host.id, client);
  }
  const runningAtStart = new Set(
    hosts.filter((host) => host.phase.phase === "running").map((host) =>
      host.id
    ),
  );
  const targets: Target[] = hosts.flatMap((server) =>
    server.spec.tools.map((def) => ({ server, def }))
  );
  return {
    store,
    hosts,
    runningAtStart,
    logs,
    clients,
    targets,
    async [Symbol.asyncDispose]() {
      for (const client of clients.values()) await client.close();
      for (const host of hosts) await host.stop(1000);
      await store.close();
      await Deno.remove(dataDir, { recursive: true });
    },
  };
}

/** Calls `name` on `client`; checks the reply is a clear rejection unless `valid`. */
async function callAndCheck(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  valid: boolean,
): Promise<void> {
  let result;
  try {
    result = await withTimeout(
      client.callTool({ name, arguments: args }),
      name,
    );
  } catch (error) {
    // A JSON-RPC error is a clear answer; anything else (a dropped link) is not.
    assert.ok(error instanceof McpError, `${name}: ${error}`);
    assert.ok(error.code < 0, `${name}: JSON-RPC code ${error.code}`);
    return;
  }
  if (valid) return;
  assert.equal(
    result.isError,
    true,
    `${name} accepted ${JSON.stringify(args).slice(0, 300)}`,
  );
  const content = Array.isArray(result.content) ? result.content : [];
  const first: unknown = content[0];
  const message = typeof first === "object" && first !== null
    ? String(Reflect.get(first, "text"))
    : "";
  assert.match(message, /Invalid arguments for /, `${name}: ${message}`);
}

Deno.test("reliability: hostile arguments to every tool of every built server are rejected and change nothing", async () => {
  await using stack = await startAll();
  assert.ok(stack.targets.length > 40, `${stack.targets.length} tools`);
  let rejected = 0;
  const secrets = new Set<string>();
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...stack.targets).chain((target) =>
        fc.tuple(
          fc.constant(target),
          nastyObject(Object.keys(target.def.input.shape)),
        )
      ),
      async ([target, args]) => {
        // A secret-shaped argument carries a unique marker, looked for in the logs at the end.
        for (const field of ["token", "password", "secret", "api_key"]) {
          if (typeof args[field] === "string") {
            args[field] = `secret-${crypto.randomUUID()}`;
            secrets.add(String(args[field]));
          }
        }
        const valid = target.def.input.safeParse(args).success;
        // Valid calls of browser tools would drive a browser: proven elsewhere.
        fc.pre(!valid || EXECUTABLE.has(target.server.id));
        const client = stack.clients.get(target.server.id);
        assert.ok(client);
        const before = valid
          ? ""
          : JSON.stringify(await dumpStore(stack.store));
        await callAndCheck(client, target.def.name, args, valid);
        if (!valid) {
          rejected++;
          assert.equal(
            JSON.stringify(await dumpStore(stack.store)),
            before,
            `${target.server.id}/${target.def.name} changed the store`,
          );
        }
      },
    ),
    { numRuns: sized(3_000, 30_000), maxSkipsPerRun: 1000 },
  );
  assert.ok(rejected > 1000, `only ${rejected} rejected calls`);
  // Rejected tokens, keys and values are not echoed into the logs.
  const logged = JSON.stringify(stack.logs);
  assert.ok(secrets.size > 0, "some calls carried a secret-shaped argument");
  for (const secret of secrets) {
    assert.ok(
      !logged.includes(secret),
      `a given ${secret.slice(0, 8)}… reached the logs`,
    );
  }
  // Servers that could not start here (desktop-control without a display)
  // are in error from the start; the others must not fall over.
  for (
    const host of stack.hosts.filter((h) => stack.runningAtStart.has(h.id))
  ) {
    assert.notEqual(host.phase.phase, "error", `${host.id} fell over`);
  }
});

Deno.test("reliability: hostile arguments through the gateway's <server>__<tool> names are rejected and change nothing", async () => {
  await using stack = await startAll();
  const gateway = stack.clients.get("gateway");
  assert.ok(gateway);
  const listed = new Set(
    (await gateway.listTools()).tools.map((tool) => tool.name),
  );
  const routed = stack.targets.filter((target) =>
    target.server.id !== "gateway" &&
    listed.has(`${target.server.id}__${target.def.name}`)
  );
  assert.ok(routed.length > 20, `gateway lists ${routed.length} routed tools`);
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...routed).chain((target) =>
        fc.tuple(
          fc.constant(target),
          nastyObject(Object.keys(target.def.input.shape)),
        )
      ),
      async ([target, args]) => {
        fc.pre(!target.def.input.safeParse(args).success);
        const before = JSON.stringify(await dumpStore(stack.store));
        await callAndCheck(
          gateway,
          `${target.server.id}__${target.def.name}`,
          args,
          false,
        );
        assert.equal(JSON.stringify(await dumpStore(stack.store)), before);
      },
    ),
    { numRuns: sized(600, 6_000), maxSkipsPerRun: 1000 },
  );
});
