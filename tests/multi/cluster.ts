// Several `agentd serve` processes on one private PostgreSQL (tests/pg_server.ts),
// each with its own data dir, all sharing one scripted model server.

import assert from "node:assert/strict";
import { z } from "zod";
import { Agent } from "../../agents/schemas.ts";
import { api, type Daemon, spawnServe, tempDir } from "../helpers.ts";
import { type PgServer, startPgServer } from "../pg_server.ts";
import { type ModelServer, startModelServer } from "../agents/model_server.ts";

export interface Cluster {
  pg: PgServer;
  /** The store URL, password included (the daemons redact it). */
  storeUrl: string;
  model: ModelServer;
  daemons: Daemon[];
  /** Starts one more daemon on the shared store. */
  spawn(extraEnv?: Record<string, string>): Promise<Daemon>;
  [Symbol.asyncDispose](): Promise<void>;
}

let databases = 0;

export async function startCluster(
  count: number,
  extraEnv: Record<string, string> = {},
  /** Also run the memory server, hosted on the same database. */
  options: { memory?: boolean } = {},
): Promise<Cluster> {
  const pg = await startPgServer();
  const dirs: { path: string; [Symbol.asyncDispose](): Promise<void> }[] = [];
  const daemons: Daemon[] = [];
  let model: ModelServer | undefined;
  try {
    const db = await pg.createDatabase(`multi_${Deno.pid}_${++databases}`);
    const url = new URL(db);
    url.password = pg.password;
    const storeUrl = url.toString();
    model = await startModelServer();
    const shared = model;
    const memory: Record<string, string> = options.memory
      ? {
        AGENTD_SERVERS: "gateway,memory",
        AGENTD_MEMORY__STORAGE: "hosted",
        AGENTD_MEMORY__URL: db,
        AGENTD_MEMORY__KEY: pg.password,
      }
      : {};
    const spawn = async (more: Record<string, string> = {}) => {
      const dir = await tempDir();
      dirs.push(dir);
      const daemon = await spawnServe(dir.path, {
        env: {
          ...shared.env,
          AGENTD_SERVERS: "gateway",
          AGENTD_STORE: storeUrl,
          // No health round picks changes up: only the per-request refresh can.
          AGENTD_GATEWAY__HEALTH_INTERVAL_MS: "3600000",
          ...memory,
          ...extraEnv,
          ...more,
        },
      });
      daemons.push(daemon);
      return daemon;
    };
    await Promise.all(Array.from({ length: count }, () => spawn()));
    return {
      pg,
      storeUrl,
      model: shared,
      daemons,
      spawn,
      async [Symbol.asyncDispose]() {
        await Promise.all(daemons.map((d) => d.stop("SIGKILL")));
        await shared.close();
        await pg.destroy();
        for (const dir of dirs) await dir[Symbol.asyncDispose]();
      },
    };
  } catch (error) {
    await Promise.all(daemons.map((d) => d.stop("SIGKILL")));
    await model?.close();
    await pg.destroy();
    for (const dir of dirs) await dir[Symbol.asyncDispose]();
    throw error;
  }
}

/** No daemon logged the store password. */
export function assertPasswordHidden(cluster: Cluster): void {
  for (const daemon of cluster.daemons) {
    const text = JSON.stringify(daemon.logs) + daemon.stray.join("\n");
    assert.ok(!text.includes(cluster.pg.password), "store password in logs");
  }
}

/** Every agent a daemon lists, page by page. */
export async function allAgents(daemon: Daemon): Promise<Agent[]> {
  const agents: Agent[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor === null
      ? "?limit=100"
      : `?limit=100&cursor=${encodeURIComponent(cursor)}`;
    const reply = await api(daemon, "GET", `/v1/agents${query}`);
    assert.equal(reply.status, 200, reply.text);
    const page = z.object({
      data: z.array(Agent),
      next_cursor: z.string().nullable(),
    }).parse(reply.json);
    agents.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor !== null);
  return agents;
}
