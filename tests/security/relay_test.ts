// Issue 33, "Smaller": the extension relay. An unpaired peer gets a small
// frame limit until it has paired, and a result is accepted only from the
// connection its call was sent to. The test plays native hosts byte for
// byte against the real in-page server, called through an MCP client.

import assert from "node:assert/strict";
import { Client } from "../../platform/mcp_sdk.ts";
import {
  FrameReader,
  FrameWriter,
  isRelayAddress,
  pairingToken,
  relayFiles,
} from "../../platform/native_messaging.ts";
import { MemoryStore } from "../../platform/store/memory.ts";
import { PINNED_EXTENSION_ID } from "../../tools/in-page/config.ts";
import { inPageServer } from "../../tools/in-page/mod.ts";
import { HostedServer } from "../../tools/kit/host.ts";
import { connectInProcess } from "../../tools/kit/transport/sdk_server.ts";
import { capturedLog, waitFor } from "../helpers.ts";
import {
  callTool,
  domAnswer,
  domTextAnswer,
} from "../tools/in-page/harness.ts";

const ORIGIN = `chrome-extension://${PINNED_EXTENSION_ID}/`;

async function connectHost(dataDir: string) {
  const address: unknown = JSON.parse(
    await Deno.readTextFile(relayFiles(dataDir).address),
  );
  assert.ok(isRelayAddress(address));
  const conn = await Deno.connect({
    hostname: "127.0.0.1",
    port: address.port,
  });
  return {
    conn,
    reader: new FrameReader(conn.readable),
    writer: new FrameWriter(conn.writable),
  };
}

async function startServer(dataDir: string) {
  const { log, logs } = capturedLog("debug");
  const store = new MemoryStore();
  const host = await HostedServer.start(inPageServer, {
    store,
    log,
    config: { connect_wait_ms: 5_000, call_timeout_ms: 20_000 },
    dataDir,
  });
  assert.equal(host.phase.phase, "running", host.phase.state.error);
  const client = new Client({ name: "relay-security", version: "1" });
  await client.connect(await connectInProcess(host, {}));
  return {
    client,
    logs,
    async close() {
      await client.close();
      await host.stop(2_000);
      await store.close();
    },
  };
}

function hangUp(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // closed by the relay already
  }
}

Deno.test("security: an unpaired relay peer may not send large frames", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "agentd-relay-sec-" });
  const server = await startServer(dataDir);
  try {
    const token = await pairingToken(dataDir);
    // A valid pairing request, padded to 64 KiB: before pairing the peer is
    // unknown, and the relay must not buffer that much from it.
    const peer = await connectHost(dataDir);
    await peer.writer.write({
      type: "pair",
      token,
      origin: ORIGIN,
      padding: "x".repeat(64 * 1024),
    });
    const answer = await peer.reader.read();
    assert.equal(
      typeof answer === "object" && answer !== null && "type" in answer &&
        answer.type,
      "refused",
      JSON.stringify(answer),
    );
    assert.match(JSON.stringify(answer), /the limit is 4096/);
    hangUp(peer.conn);

    // Once paired, large results are fine.
    const host = await connectHost(dataDir);
    await host.writer.write({ type: "pair", token, origin: ORIGIN });
    assert.deepEqual(await host.reader.read(), { type: "paired" });
    await host.writer.write({ type: "hello", version: "1", extension_id: "x" });
    const call = callTool(server.client, "get_dom");
    const frame = await host.reader.read();
    assert.ok(typeof frame === "object" && frame !== null && "id" in frame);
    const html = "<p>" + "y".repeat(200 * 1024) + "</p>";
    await host.writer.write({
      type: "result",
      id: frame.id,
      ok: true,
      value: domAnswer(html),
    });
    const result = await call;
    assert.equal(result.isError, false, result.text);
    hangUp(host.conn);
  } finally {
    await server.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("security: a relay result counts only from the connection its call went to", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "agentd-relay-sec-" });
  const server = await startServer(dataDir);
  const token = await pairingToken(dataDir);
  const hosts: Awaited<ReturnType<typeof connectHost>>[] = [];
  try {
    for (const name of ["older", "newer"]) {
      const host = await connectHost(dataDir);
      hosts.push(host);
      await host.writer.write({ type: "pair", token, origin: ORIGIN });
      assert.deepEqual(await host.reader.read(), { type: "paired" });
      await host.writer.write({
        type: "hello",
        version: name,
        extension_id: PINNED_EXTENSION_ID,
      });
    }
    const [older, newer] = hosts;
    // Calls go to the newest connection.
    await waitFor(
      () =>
        server.logs.filter((line) => line.event === "extension_connected")
          .length,
      (count) => count === 2,
    );
    let settled = false;
    const call = callTool(server.client, "get_text_content", {
      selector: "h1",
    }).finally(() => settled = true);
    const frame = await newer.reader.read();
    assert.ok(
      typeof frame === "object" && frame !== null && "id" in frame &&
        typeof frame.id === "number",
    );

    // The other connection answers that call first, with a forged value.
    await older.writer.write({
      type: "result",
      id: frame.id,
      ok: true,
      value: domTextAnswer("forged by another connection", "h1"),
    });
    // And an id nobody has open.
    await older.writer.write({
      type: "result",
      id: 999_999,
      ok: true,
      value: domTextAnswer("stray", "h1"),
    });
    await waitFor(
      () => ({
        settled,
        dropped: server.logs.filter((line) =>
          line.event === "relay_result_dropped"
        ).length,
      }),
      (seen) => seen.settled || seen.dropped === 2,
    );
    assert.equal(settled, false, "the forged result did not answer the call");

    await newer.writer.write({
      type: "result",
      id: frame.id,
      ok: true,
      value: domTextAnswer("from the right connection", "h1"),
    });
    const result = await call;
    assert.equal(result.isError, false, result.text);
    assert.equal(result.structured.text, "from the right connection");
  } finally {
    for (const host of hosts) hangUp(host.conn);
    await server.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});
