// MCP tasks in a real `agentd serve`, driven by the MCP SDK client with
// agent tokens: a long `wait_for` as a task (handle at once, progress, only
// its agent sees it, cancel stops it), a `file_write` that waits for a
// person's approval (`input_required`, then `agentd approve`, then
// completed), and a daemon killed mid-task whose restart on the same store
// says the task failed and why.

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  CallToolResultSchema,
  Client,
  CreateTaskResultSchema,
  McpError,
  StreamableHTTPClientTransport,
} from "../../platform/mcp_sdk.ts";
import { CHROMIUM, killProcessesUsing } from "../browser.ts";
import { startXvfb, xTestIgnore } from "./desktop-control/xvfb.ts";
import {
  type Daemon,
  freePort,
  runCli,
  spawnServe,
  tempDir,
  waitFor,
} from "../helpers.ts";

const OPERATOR = "operator-token-0123456789-tasks";
const ALICE = "alice-agent-token-0123456789-tasks";
const MALLORY = "mallory-agent-token-0123456789-tasks";

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: "tasks-daemon-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

function startTask(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  onprogress?: (progress: { progress: number; message?: string }) => void,
) {
  return client.request(
    { method: "tools/call", params: { name, arguments: args, task: {} } },
    CreateTaskResultSchema,
    onprogress ? { onprogress } : {},
  );
}

async function rpcError(promise: Promise<unknown>): Promise<McpError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof McpError) return error;
    throw error;
  }
  throw new Error("expected a JSON-RPC error, got a result");
}

async function inFlight(daemon: Daemon, server: string): Promise<number> {
  const response = await fetch(`${daemon.url}/health`, {
    headers: { authorization: `Bearer ${OPERATOR}` },
  });
  const body = await response.json();
  return Number(body.servers?.[server]?.in_flight ?? -1);
}

Deno.test({
  name:
    "tasks in agentd serve: wait_for as a task with progress, private to its agent, cancelled; approval as input_required; a restart fails the task it killed",
  ignore: xTestIgnore ||
    (CHROMIUM === undefined && Deno.env.get("CI") !== "true"),
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using dir = await tempDir();
    const files = join(dir.path, "files");
    await Deno.mkdir(files, { recursive: true });
    const config = join(dir.path, "agentd.json");
    await Deno.writeTextFile(
      config,
      JSON.stringify({
        token: OPERATOR,
        agent_tokens: { alice: ALICE, mallory: MALLORY },
        servers: ["browser-automation", "desktop-control"],
        "browser-automation": {
          cdp_port: freePort(),
          ...(CHROMIUM ? { executable: CHROMIUM } : {}),
        },
        "desktop-control": { allowed_roots: [files] },
        policy: {
          rules: [
            {
              id: "alice-asks-writes",
              agent: "alice",
              server: "desktop-control",
              tool: "file_write",
              decision: "ask",
            },
            {
              id: "agents-browse",
              server: "browser-automation",
              decision: "allow",
            },
            {
              id: "agents-files",
              server: "desktop-control",
              decision: "allow",
            },
          ],
          ask_timeout_ms: 120_000,
        },
      }),
    );
    const data = join(dir.path, "data");
    const x = await startXvfb();
    const serve = () =>
      spawnServe(data, {
        extra: ["--config", config],
        env: { DISPLAY: x.display },
      });
    let daemon = await serve().catch(async (error) => {
      await x.close();
      throw error;
    });
    const clients: Client[] = [];
    const open = async (path: string, token: string) => {
      const client = await connect(`${daemon.url}${path}`, token);
      clients.push(client);
      return client;
    };
    try {
      const browser = "/mcp/browser-automation";
      const alice = await open(browser, ALICE);
      const mallory = await open(browser, MALLORY);
      const operator = await open(browser, OPERATOR);
      const { tools } = await alice.listTools();
      assert.deepEqual(tools.find((t) => t.name === "wait_for")?.execution, {
        taskSupport: "optional",
      });

      // A two-minute wait_for answers its handle at once and reports progress.
      const reports: { message?: string }[] = [];
      const created = await startTask(
        alice,
        "wait_for",
        { selector: "#never-there", timeout: 120_000 },
        (progress) => reports.push(progress),
      );
      const id = created.task.taskId;
      assert.equal(created.task.status, "working");
      await waitFor(() => reports.length, (n) => n >= 1, 20_000);
      assert.equal(reports[0].message, "wait_for is running");
      assert.equal(
        (await alice.experimental.tasks.getTask(id)).status,
        "working",
      );

      // Another agent's token can neither see nor touch it; the operator sees it.
      // One at a time: a refusal arriving before its turn would go unhandled.
      for (
        const attempt of [
          () => mallory.experimental.tasks.getTask(id),
          () =>
            mallory.experimental.tasks.getTaskResult(id, CallToolResultSchema),
          () => mallory.experimental.tasks.cancelTask(id),
        ]
      ) {
        assert.equal((await rpcError(attempt())).code, -32602);
      }
      assert.deepEqual(
        (await mallory.experimental.tasks.listTasks()).tasks,
        [],
      );
      const seen = await operator.experimental.tasks.listTasks();
      assert.ok(seen.tasks.some((task) => task.taskId === id));
      assert.equal(
        (await alice.experimental.tasks.getTask(id)).status,
        "working",
      );

      // Cancel stops the call itself (nothing in flight), long before its timeout.
      const cancelled = await alice.experimental.tasks.cancelTask(id);
      assert.equal(cancelled.status, "cancelled");
      await waitFor(
        () => inFlight(daemon, "browser-automation"),
        (n) => n === 0,
      );
      assert.equal(
        (await alice.experimental.tasks.getTask(id)).status,
        "cancelled",
      );

      // The dashboard's view lists the task with server, tool, status and caller.
      const view = await fetch(`${daemon.url}/admin/tasks`, {
        headers: { authorization: `Bearer ${OPERATOR}` },
      });
      assert.equal(view.status, 200);
      const rows: Record<string, unknown>[] = (await view.json()).tasks;
      const row = rows.find((each) => each.id === id);
      assert.equal(row?.server, "browser-automation");
      assert.equal(row?.tool, "wait_for");
      assert.equal(row?.status, "cancelled");
      assert.equal(row?.caller, "agent:alice");
      const agentView = await fetch(`${daemon.url}/admin/tasks`, {
        headers: { authorization: `Bearer ${MALLORY}` },
      });
      assert.equal(agentView.status, 200);
      assert.deepEqual((await agentView.json()).tasks, []);
      // /admin (the page's data) has a Tasks section with the same rows.
      const admin = await fetch(`${daemon.url}/admin?format=json`, {
        headers: { authorization: `Bearer ${OPERATOR}` },
      });
      const page: {
        sections: { server: string; tables: { rows: { id: string }[] }[] }[];
      } = await admin.json();
      const section = page.sections.find((each) => each.server === "tasks");
      assert.ok(section?.tables[0].rows.some((each) => each.id === id));

      // A write that waits for a person's approval is input_required, naming it.
      const desktop = await open("/mcp/desktop-control", ALICE);
      const path = join(files, "approved.txt");
      const write = await startTask(desktop, "file_write", {
        path,
        content: "written after approval",
      });
      const waiting = await waitFor(
        () => desktop.experimental.tasks.getTask(write.task.taskId),
        (task) => task.status === "input_required",
      );
      const approval = /approval ([0-9a-f]{8})/.exec(
        waiting.statusMessage ?? "",
      );
      assert.ok(approval, waiting.statusMessage);
      const cli = await runCli(
        ["approve", approval[1], "--url", daemon.url],
        { AGENTD_TOKEN: OPERATOR },
      );
      assert.equal(cli.code, 0, cli.stderr);
      const written = await desktop.experimental.tasks.getTaskResult(
        write.task.taskId,
        CallToolResultSchema,
      );
      assert.notEqual(written.isError, true, JSON.stringify(written));
      assert.equal(await Deno.readTextFile(path), "written after approval");
      assert.equal(
        (await desktop.experimental.tasks.getTask(write.task.taskId)).status,
        "completed",
      );

      // Killed mid-task: the restarted daemon says the task failed, and why.
      const long = await startTask(alice, "wait_for", {
        selector: "#never-there",
        timeout: 120_000,
      });
      await waitFor(
        () => inFlight(daemon, "browser-automation"),
        (n) => n === 1,
      );
      await Promise.all(
        clients.splice(0).map((client) => client.close().catch(() => {})),
      );
      await daemon.stop("SIGKILL");
      daemon = await serve();
      const again = await open(browser, ALICE);
      const failed = await again.experimental.tasks.getTask(long.task.taskId);
      assert.equal(failed.status, "failed");
      assert.match(
        failed.statusMessage ?? "",
        /The daemon restarted while this task was working; call wait_for again/,
      );
      const result = await again.experimental.tasks.getTaskResult(
        long.task.taskId,
        CallToolResultSchema,
      );
      assert.equal(result.isError, true);
      // What finished before the kill is still there.
      assert.equal(
        (await again.experimental.tasks.getTask(id)).status,
        "cancelled",
      );
    } finally {
      await Promise.all(
        clients.map((client) => client.close().catch(() => {})),
      );
      await daemon.stop();
      await killProcessesUsing(data);
      await x.close();
    }
  },
});
