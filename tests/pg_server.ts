// A private PostgreSQL server for one test file: initdb into a temp dir,
// pg_ctl on a free port, password auth over TCP. stop()/start() really stop
// and start the postmaster so the hosted-mode tests can simulate an outage.
//
// PostgreSQL refuses to run as root, so as root every server command runs as
// the `postgres` system user (runuser) and the temp dir is handed to it.

import { join } from "node:path";

export interface PgServer {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (no password in it). */
  url: string;
  password: string;
  port: number;
  /** A fresh database on this server; returns its URL (no password in it). */
  createDatabase(name: string): Promise<string>;
  /** Fast shutdown: open connections are terminated, new ones are refused. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the server (if running) and removes its directory. Idempotent. */
  destroy(): Promise<void>;
}

const BIN_ROOT = "/usr/lib/postgresql";

/** The newest installed PostgreSQL server's bin dir, or null. */
export function findPgBin(): string | null {
  const override = Deno.env.get("AGENTD_PG_BIN");
  const candidates: string[] = override ? [override] : [];
  try {
    const versions = [...Deno.readDirSync(BIN_ROOT)]
      .map((e) => e.name)
      .filter((n) => /^\d+$/.test(n))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => join(BIN_ROOT, v, "bin")));
  } catch {
    // No Debian PostgreSQL layout; only the override (if any) is tried.
  }
  for (const dir of candidates) {
    try {
      if (Deno.statSync(join(dir, "initdb")).isFile) return dir;
    } catch {
      continue;
    }
  }
  return null;
}

const MISSING_MESSAGE =
  `PostgreSQL server binaries (initdb, pg_ctl) not found under ${BIN_ROOT}/<version>/bin ` +
  "(or AGENTD_PG_BIN). Install them with `apt-get install -y postgresql` " +
  "(.ci/run does this when run as root).";

/**
 * `ignore` for Deno.test: skip when PostgreSQL is missing, except on CI
 * (CI=true) where the tests run and fail with MISSING_MESSAGE instead.
 */
export function pgTestIgnore(): boolean {
  if (findPgBin() !== null) return false;
  if (Deno.env.get("CI") === "true") return false;
  console.warn(`skipping PostgreSQL tests: ${MISSING_MESSAGE}`);
  return true;
}

export async function startPgServer(): Promise<PgServer> {
  const bin = findPgBin();
  if (bin === null) throw new Error(MISSING_MESSAGE);
  const asRoot = Deno.uid() === 0;
  const dir = await Deno.makeTempDir({ prefix: "agentd_pg_" });
  const data = join(dir, "data");
  const logFile = join(dir, "server.log");
  const password = randomPassword();
  const port = await freePort();
  let running = false;
  let destroyed = false;

  const command = (tool: string, args: string[]) =>
    asRoot
      ? new Deno.Command("runuser", {
        args: ["-u", "postgres", "--", join(bin, tool), ...args],
      })
      : new Deno.Command(join(bin, tool), { args });
  const run = async (tool: string, args: string[]): Promise<void> => {
    const out = await command(tool, args).output();
    if (!out.success) {
      const text = new TextDecoder().decode(out.stderr) +
        new TextDecoder().decode(out.stdout);
      throw new Error(
        `${tool} ${args.join(" ")} failed (exit ${out.code}): ${text.trim()}` +
          await serverLog(logFile),
      );
    }
  };

  try {
    await Deno.writeTextFile(join(dir, "pwfile"), password + "\n");
    if (asRoot) await chownToPostgres(dir);
    await run("initdb", [
      "-D",
      data,
      "-U",
      "postgres",
      `--pwfile=${join(dir, "pwfile")}`,
      "--auth-local=trust",
      "--auth-host=scram-sha-256",
      "-E",
      "UTF8",
      "--locale=C.UTF-8",
      "--no-sync",
    ]);
  } catch (error) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw error;
  }

  // Durability settings off: the data dies with the test anyway.
  const serverOptions = [
    `-p ${port}`,
    `-k ${dir}`,
    "-c listen_addresses=127.0.0.1",
    "-c fsync=off",
    "-c synchronous_commit=off",
    "-c full_page_writes=off",
    "-c max_connections=50",
  ].join(" ");

  // A test that dies on an uncaught error skips its finally blocks; still
  // leave no postmaster or data dir behind.
  const onUnload = () => {
    if (destroyed) return;
    try {
      if (running) {
        command("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"])
          .outputSync();
      }
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // Best effort at exit.
    }
  };
  globalThis.addEventListener("unload", onUnload);

  const server: PgServer = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    password,
    port,
    async createDatabase(name) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) {
        throw new Error(`Invalid test database name "${name}"`);
      }
      await run("psql", [
        "-h",
        dir,
        "-p",
        String(port),
        "-U",
        "postgres",
        "-d",
        "postgres",
        "-v",
        "ON_ERROR_STOP=1",
        "-q",
        "-c",
        `CREATE DATABASE ${name}`,
      ]);
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    async start() {
      if (running) return;
      await run("pg_ctl", [
        "-D",
        data,
        "-l",
        logFile,
        "-w",
        "-t",
        "60",
        "-o",
        serverOptions,
        "start",
      ]);
      running = true;
    },
    async stop() {
      if (!running) return;
      await run("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]);
      running = false;
    },
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      globalThis.removeEventListener("unload", onUnload);
      if (running) {
        await run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"])
          .catch(() => {});
        running = false;
      }
      await Deno.remove(dir, { recursive: true });
    },
  };
  try {
    await server.start();
  } catch (error) {
    await server.destroy().catch(() => {});
    throw error;
  }
  return server;
}

function randomPassword(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(18));
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

async function freePort(): Promise<number> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr;
  listener.close();
  return await Promise.resolve(port);
}

async function chownToPostgres(dir: string): Promise<void> {
  const out = await new Deno.Command("id", { args: ["-u", "postgres"] })
    .output();
  const gid = await new Deno.Command("id", { args: ["-g", "postgres"] })
    .output();
  if (!out.success || !gid.success) {
    throw new Error(
      "Running as root but there is no `postgres` system user to run " +
        "PostgreSQL as; install the postgresql package",
    );
  }
  const uid = Number(new TextDecoder().decode(out.stdout).trim());
  const group = Number(new TextDecoder().decode(gid.stdout).trim());
  await Deno.chown(dir, uid, group);
  await Deno.chown(join(dir, "pwfile"), uid, group);
}

async function serverLog(path: string): Promise<string> {
  try {
    const text = await Deno.readTextFile(path);
    return `\nserver log (tail):\n${text.split("\n").slice(-15).join("\n")}`;
  } catch {
    return "";
  }
}

/** A TCP proxy to a local port that can simulate a network partition. */
export interface TcpProxy {
  port: number;
  /** Holds all traffic (both ways) until heal(): the peer seems hung. */
  partition(): void;
  heal(): void;
  close(): Promise<void>;
}

export function startTcpProxy(targetPort: number): TcpProxy {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns = new Set<Deno.Conn>();
  const pumps = new Set<Promise<void>>();
  let gate: PromiseWithResolvers<void> | null = null;

  const closeConn = (conn: Deno.Conn) => {
    if (conns.delete(conn)) conn.close();
  };
  const pump = async (from: Deno.Conn, to: Deno.Conn): Promise<void> => {
    const buffer = new Uint8Array(64 * 1024);
    try {
      for (;;) {
        const n = await from.read(buffer);
        if (n === null) break;
        // A partition holds data as TCP would while retransmitting.
        while (gate) await gate.promise;
        let written = 0;
        while (written < n) {
          written += await to.write(buffer.subarray(written, n));
        }
      }
    } catch {
      // Either side closed: close the other one too.
    } finally {
      closeConn(from);
      closeConn(to);
    }
  };
  const track = (p: Promise<void>) => {
    pumps.add(p);
    void p.finally(() => pumps.delete(p));
  };
  const accepting = (async () => {
    try {
      for await (const client of listener) {
        conns.add(client);
        try {
          const upstream = await Deno.connect({
            hostname: "127.0.0.1",
            port: targetPort,
          });
          conns.add(upstream);
          track(pump(client, upstream));
          track(pump(upstream, client));
        } catch {
          closeConn(client);
        }
      }
    } catch {
      // Listener closed.
    }
  })();

  return {
    port: listener.addr.port,
    partition() {
      gate ??= Promise.withResolvers<void>();
    },
    heal() {
      gate?.resolve();
      gate = null;
    },
    async close() {
      gate?.resolve();
      gate = null;
      listener.close();
      for (const conn of [...conns]) closeConn(conn);
      await accepting;
      await Promise.all(pumps);
    },
  };
}
