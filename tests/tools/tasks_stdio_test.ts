// MCP tasks on stdio (`agentd mcp browser-automation`, the real CLI and
// Chromium): a wait_for task answers its handle at once and tasks/result
// gives what the plain call gives; a cancelled wait_for frees the tab at
// once (the next call on it does not wait out the cancelled one's timeout).

import assert from "node:assert/strict";
import {
  CallToolResultSchema,
  Client,
  CreateTaskResultSchema,
} from "../../platform/mcp_sdk.ts";
import { browserTestIgnore, CHROMIUM } from "../browser.ts";
import { fixtureStdio, freePort, tempDir } from "../helpers.ts";

Deno.test({
  name:
    "tasks on stdio: wait_for as a task equals the plain call; cancel stops it",
  ignore: browserTestIgnore,
  sanitizeResources: false,
  async fn() {
    await using dir = await tempDir();
    const transport = fixtureStdio(
      [
        "mcp",
        "browser-automation",
        "--data-dir",
        dir.path,
        "--cdp-port",
        String(freePort()),
        ...(CHROMIUM ? ["--executable", CHROMIUM] : []),
      ],
      { NO_COLOR: "1", PATH: Deno.env.get("PATH") ?? "" },
    );
    const client = new Client({ name: "tasks-stdio", version: "1.0.0" });
    await client.connect(transport);
    try {
      assert.ok(client.getServerCapabilities()?.tasks?.requests?.tools?.call);
      const args = { selector: "#never-there", timeout: 300 };
      const { task } = await client.request(
        {
          method: "tools/call",
          params: { name: "wait_for", arguments: args, task: { ttl: 60_000 } },
        },
        CreateTaskResultSchema,
      );
      assert.equal(task.status, "working");
      const result = await client.experimental.tasks.getTaskResult(
        task.taskId,
        CallToolResultSchema,
      );
      const plain = await client.callTool({
        name: "wait_for",
        arguments: args,
      });
      assert.equal(result.isError, true);
      assert.deepEqual(result.content, plain.content);
      const failed = await client.experimental.tasks.getTask(task.taskId);
      assert.equal(failed.status, "failed");
      assert.match(failed.statusMessage ?? "", /Timed out after 300 ms/);

      const long = await client.request(
        {
          method: "tools/call",
          params: {
            name: "wait_for",
            arguments: { selector: "#never-there", timeout: 120_000 },
            task: {},
          },
        },
        CreateTaskResultSchema,
      );
      const cancelled = await client.experimental.tasks.cancelTask(
        long.task.taskId,
      );
      assert.equal(cancelled.status, "cancelled");
      // The tab is free again: this call would queue behind a 2-minute wait otherwise.
      const next = await client.callTool(
        { name: "wait_for", arguments: args },
        undefined,
        { timeout: 30_000 },
      );
      assert.deepEqual(next.content, plain.content);
    } finally {
      await client.close();
    }
  },
});
