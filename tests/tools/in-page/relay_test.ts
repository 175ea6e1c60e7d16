// The relay and the server's lifecycle without a browser: the test plays the
// native host byte for byte (pairing, hello, calls and results), and checks
// refusals, timeouts, waiting for the extension, and shutdown.

import assert from "node:assert/strict";
import { Client } from "../../../platform/mcp_sdk.ts";
import {
  encodeFrame,
  extensionIdFromKey,
  FrameReader,
  FrameWriter,
  isRelayAddress,
  pairingToken,
  relayFiles,
} from "../../../platform/native_messaging.ts";
import { MemoryStore } from "../../../platform/store/memory.ts";
import { PINNED_EXTENSION_ID } from "../../../tools/in-page/config.ts";
import { inPageServer } from "../../../tools/in-page/mod.ts";
import { HostedServer } from "../../../tools/kit/host.ts";
import { connectInProcess } from "../../../tools/kit/transport/sdk_server.ts";
import { capturedLog, waitFor } from "../../helpers.ts";
import { callTool, domTextAnswer, scriptAnswer } from "./harness.ts";

const ORIGIN = `chrome-extension://${PINNED_EXTENSION_ID}/`;

Deno.test("native messaging: frames round-trip across chunk borders; oversized and non-JSON frames are refused", async () => {
  const frames = [
    encodeFrame({ a: 1 }),
    encodeFrame({ text: "héllo ✓" }),
    encodeFrame([1, 2, 3]),
  ];
  const bytes = new Uint8Array(
    frames.reduce((sum, frame) => sum + frame.length, 0),
  );
  let at = 0;
  for (const frame of frames) {
    bytes.set(frame, at);
    at += frame.length;
  }
  assert.deepEqual(
    [...frames[0].subarray(0, 4)],
    [7, 0, 0, 0],
    "4-byte little-endian length",
  );
  // Delivered one byte at a time.
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const byte of bytes) controller.enqueue(new Uint8Array([byte]));
      controller.close();
    },
  });
  const reader = new FrameReader(stream);
  assert.deepEqual(await reader.read(), { a: 1 });
  assert.deepEqual(await reader.read(), { text: "héllo ✓" });
  assert.deepEqual(await reader.read(), [1, 2, 3]);
  assert.equal(await reader.read(), undefined);

  const http = new TextEncoder().encode("GET / HTTP/1.1\r\n\r\n");
  const refusing = new FrameReader(ReadableStream.from([http]), 1024);
  await assert.rejects(
    refusing.read(),
    /Frame of \d+ bytes announced; the limit is 1024/,
  );
  const notJson = new Uint8Array([3, 0, 0, 0, 0x7b, 0x7b, 0x7b]);
  await assert.rejects(
    new FrameReader(ReadableStream.from([notJson])).read(),
    /not UTF-8 JSON/,
  );
  assert.throws(
    () => encodeFrame("x".repeat(100), 10),
    /over the 10-byte frame limit/,
  );
});

Deno.test("the manifest's key gives the pinned extension id", async () => {
  const manifest = JSON.parse(
    await Deno.readTextFile(
      new URL("../../../extension/manifest.json", import.meta.url),
    ),
  );
  assert.equal(await extensionIdFromKey(manifest.key), PINNED_EXTENSION_ID);
});

/** Closes a connection the peer may already have ended. */
function hangUp(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // reading to the end closed it already
  }
}

interface FakeHost {
  reader: FrameReader;
  writer: FrameWriter;
  conn: Deno.Conn;
}

/** Connects to the relay as `agentd native-host` does and presents `token`. */
async function pairAs(dataDir: string, token: string, origin = ORIGIN): Promise<
  FakeHost & { answer: unknown }
> {
  const address: unknown = JSON.parse(
    await Deno.readTextFile(relayFiles(dataDir).address),
  );
  assert.ok(isRelayAddress(address));
  const conn = await Deno.connect({
    hostname: "127.0.0.1",
    port: address.port,
  });
  const reader = new FrameReader(conn.readable);
  const writer = new FrameWriter(conn.writable);
  await writer.write({ type: "pair", token, origin });
  return { reader, writer, conn, answer: await reader.read() };
}

async function startServer(
  dataDir: string,
  config: Record<string, unknown> = {},
) {
  const { log, logs } = capturedLog("debug");
  const store = new MemoryStore();
  const host = await HostedServer.start(inPageServer, {
    store,
    log,
    config: { connect_wait_ms: 0, ...config },
    dataDir,
  });
  assert.equal(host.phase.phase, "running", host.phase.state.error);
  const client = new Client({ name: "relay-test", version: "1" });
  await client.connect(await connectInProcess(host, {}));
  const details = async (): Promise<Record<string, unknown>> => {
    const health = await host.health();
    const found = health.details;
    assert.ok(
      typeof found === "object" && found !== null && !Array.isArray(found),
    );
    return { ...found };
  };
  return {
    host,
    client,
    logs,
    details,
    async close() {
      await client.close();
      await host.stop(2_000);
      await store.close();
    },
  };
}

Deno.test("relay: without the extension a call fails saying how to connect it; /health says waiting", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "agentd-relay-" });
  const server = await startServer(dataDir);
  try {
    const health = await server.details();
    assert.equal(health.extension, "waiting");
    assert.equal(health.extension_version, null);
    const result = await callTool(server.client, "get_dom");
    assert.equal(result.isError, true);
    assert.match(
      result.text,
      /get_dom failed: The companion extension is not connected/,
    );
    assert.match(result.text, /agentd native-host install/);
  } finally {
    await server.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("relay: a paired host relays calls and results; wrong tokens, foreign origins and HTTP requests are refused", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "agentd-relay-" });
  const server = await startServer(dataDir, { call_timeout_ms: 1000 });
  try {
    const token = await pairingToken(dataDir);
    const mode = (await Deno.stat(relayFiles(dataDir).token)).mode ?? 0;
    assert.equal(mode & 0o077, 0, "only the user may read the pairing token");

    const wrong = await pairAs(dataDir, "0".repeat(64));
    assert.deepEqual(wrong.answer, {
      type: "refused",
      reason: "wrong pairing token",
    });
    assert.equal(
      await wrong.reader.read(),
      undefined,
      "then the relay hangs up",
    );
    hangUp(wrong.conn);

    const foreign = await pairAs(
      dataDir,
      token,
      `chrome-extension://${"a".repeat(32)}/`,
    );
    assert.match(JSON.stringify(foreign.answer), /is not an allowed extension/);
    hangUp(foreign.conn);

    // What a web page's fetch sends: an HTTP request, not a frame.
    const address: unknown = JSON.parse(
      await Deno.readTextFile(relayFiles(dataDir).address),
    );
    assert.ok(isRelayAddress(address));
    const conn = await Deno.connect({
      hostname: "127.0.0.1",
      port: address.port,
    });
    await conn.write(
      new TextEncoder().encode(
        "POST /relay HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://evil.test\r\n\r\n{}",
      ),
    );
    const reply = await new Response(conn.readable).text();
    assert.match(reply, /an HTTP request \(POST\) is not a native host/);
    assert.equal((await server.details()).refused_connections, 3);
    assert.ok(server.logs.some((line) => line.event === "relay_refused"));
    assert.equal((await server.details()).extension, "waiting");

    // A real pairing: hello, then a call answered by the "extension".
    const host = await pairAs(dataDir, token);
    assert.deepEqual(host.answer, { type: "paired" });
    await host.writer.write({
      type: "hello",
      version: "9.9.9",
      extension_id: PINNED_EXTENSION_ID,
      user_agent: "test",
    });
    await waitFor(
      () => server.details(),
      (health) => health.extension === "connected",
    );
    const answered = (async () => {
      const call: unknown = await host.reader.read();
      assert.ok(
        typeof call === "object" && call !== null && "id" in call &&
          "action" in call,
      );
      assert.equal(call.action, "dom.text");
      assert.ok("params" in call);
      // Every call carries the daemon's origin, which the extension refuses
      // to act in (none here: this server has no HTTP address).
      assert.deepEqual(call.params, {
        selector: "#x",
        max_chars: 20_000,
        daemon: { ports: [], hosts: [] },
      });
      await host.writer.write({
        type: "result",
        id: call.id,
        ok: true,
        value: domTextAnswer("from the page", "#x"),
      });
      const second: unknown = await host.reader.read();
      assert.ok(
        typeof second === "object" && second !== null && "id" in second,
      );
      await host.writer.write({
        type: "result",
        id: second.id,
        ok: false,
        error: 'No element matches "#y"',
      });
    })();
    const first = await callTool(server.client, "get_text_content", {
      selector: "#x",
    });
    assert.equal(first.isError, false, first.text);
    assert.equal(first.structured.text, "from the page");
    const failed = await callTool(server.client, "get_text_content", {
      selector: "#y",
    });
    assert.equal(failed.isError, true);
    assert.match(
      failed.text,
      /get_text_content failed: No element matches "#y"/,
    );
    await answered;
    const health = await server.details();
    assert.equal(health.extension_version, "9.9.9");

    // An extension that never answers: the call times out with a clear error.
    const silent = await callTool(server.client, "get_page_state");
    assert.equal(silent.isError, true);
    assert.match(silent.text, /did not answer page\.state within 1000 ms/);

    // The host goes away mid-call: the call fails at once, health says waiting.
    const pending = callTool(server.client, "get_dom");
    await host.reader.read();
    hangUp(host.conn);
    const lost = await pending;
    assert.equal(lost.isError, true);
    assert.match(lost.text, /disconnected while the call ran/);
    assert.equal((await server.details()).extension, "waiting");
  } finally {
    await server.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("relay: a call waits for the extension to connect; shutdown answers pending calls and removes relay.json", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "agentd-relay-" });
  const server = await startServer(dataDir, { connect_wait_ms: 10_000 });
  try {
    const token = await pairingToken(dataDir);
    const waiting = callTool(server.client, "execute_js", { script: "1" });
    const host = await pairAs(dataDir, token);
    await host.writer.write({
      type: "hello",
      version: "1.0.0",
      extension_id: PINNED_EXTENSION_ID,
    });
    const call: unknown = await host.reader.read();
    assert.ok(typeof call === "object" && call !== null && "id" in call);
    await host.writer.write({
      type: "result",
      id: call.id,
      ok: true,
      value: scriptAnswer(1),
    });
    const result = await waiting;
    assert.equal(result.isError, false, result.text);
    assert.equal(result.structured.value, 1);

    const pending = callTool(server.client, "get_dom");
    await host.reader.read(); // the call arrived; nobody answers
    await server.host.stop(100);
    const ended = await pending;
    assert.equal(ended.isError, true);
    assert.match(ended.text, /shut down before the extension answered/);
    await assert.rejects(
      Deno.stat(relayFiles(dataDir).address),
      Deno.errors.NotFound,
    );
    assert.equal(
      await host.reader.read(),
      undefined,
      "the host link is closed",
    );
    hangUp(host.conn);
  } finally {
    await server.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("relay: two browsers connected: calls go to the newest, and to the other once it leaves", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "agentd-relay-" });
  const server = await startServer(dataDir);
  try {
    const token = await pairingToken(dataDir);
    const older = await pairAs(dataDir, token);
    await older.writer.write({
      type: "hello",
      version: "1.0.0",
      user_agent: "older",
    });
    const newer = await pairAs(dataDir, token);
    await newer.writer.write({
      type: "hello",
      version: "1.0.0",
      user_agent: "newer",
    });
    await waitFor(
      () => server.details(),
      (health) => health.browser === "newer",
    );
    assert.equal((await server.details()).hosts_open, 2);

    const answer = async (host: FakeHost, text: string) => {
      const call: unknown = await host.reader.read();
      assert.ok(typeof call === "object" && call !== null && "id" in call);
      await host.writer.write({
        type: "result",
        id: call.id,
        ok: true,
        value: domTextAnswer(text),
      });
    };
    const [first] = await Promise.all([
      callTool(server.client, "get_text_content", { selector: "p" }),
      answer(newer, "from newer"),
    ]);
    assert.equal(first.structured.text, "from newer");

    hangUp(newer.conn);
    await waitFor(
      () => server.details(),
      (health) => health.browser === "older",
    );
    const [second] = await Promise.all([
      callTool(server.client, "get_text_content", { selector: "p" }),
      answer(older, "from older"),
    ]);
    assert.equal(second.structured.text, "from older");
    assert.equal((await server.details()).extension, "connected");
    hangUp(older.conn);
  } finally {
    await server.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});
