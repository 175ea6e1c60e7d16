// The relay: the daemon's end of the extension link. It listens on loopback
// for `agentd native-host` (which the browser starts for the extension),
// admits a connection only with the pairing token from the data dir, and
// then exchanges calls and results with the extension through it. Web pages
// cannot speak this framing: anything else (an HTTP request) is refused.

import {
  FrameError,
  FrameReader,
  FrameWriter,
  HOST_TO_BROWSER_MAX,
  isRelayAddress,
  pairingToken,
  relayFiles,
} from "../../platform/native_messaging.ts";
import { sameSecret } from "../../platform/identity.ts";
import { messageOf } from "../../platform/errors.ts";
import type { Logger } from "../../platform/log.ts";
import type { JsonValue } from "../../platform/store/mod.ts";

const HELLO_TIMEOUT_MS = 5_000;
/** Frames an unpaired peer may send: a pairing message is a few hundred bytes. */
export const UNPAIRED_FRAME_MAX = 4 * 1024;
/** Frames a paired host may send (results carry DOMs and trees). */
export const PAIRED_FRAME_MAX = 16 * 1024 * 1024;
const RECENT_EVENTS = 50;

export type ExtensionState = "waiting" | "connected";

export interface RelayOptions {
  dataDir: string;
  /** Loopback port to listen on; 0 picks a free one (written to relay.json). */
  port: number;
  /** Extension ids whose native host may pair (chrome-extension://<id>/ origins). */
  allowedExtensionIds: readonly string[];
  log: Logger;
}

/** A refusal or failure reaching the extension; its message says what to do. */
export class RelayError extends Error {
  override name = "RelayError";
}

interface Session {
  id: number;
  reader: FrameReader;
  writer: FrameWriter;
  conn: Deno.Conn;
  origin: string;
  extension?: { version: string; id: string; userAgent: string };
  since: string;
}

interface Pending {
  session: number;
  resolve(value: JsonValue): void;
  reject(error: Error): void;
  action: string;
}

export class ExtensionRelay {
  readonly #options: RelayOptions;
  #listener: Deno.TcpListener | undefined;
  #token = "";
  /** Paired hosts, oldest first; calls go to the newest with an extension (several browsers may connect). */
  readonly #sessions: Session[] = [];
  #nextSession = 1;
  #nextCall = 1;
  readonly #pending = new Map<number, Pending>();
  readonly #waiters = new Set<() => void>();
  readonly #events: { [key: string]: JsonValue }[] = [];
  #waitingSince = new Date().toISOString();
  #lastDisconnect: string | undefined;
  #refused = 0;
  #connections = 0;
  #stopped = false;

  constructor(options: RelayOptions) {
    this.#options = options;
  }

  get port(): number {
    const address = this.#listener?.addr;
    return address && "port" in address ? address.port : 0;
  }

  get state(): ExtensionState {
    return this.#current() ? "connected" : "waiting";
  }

  /** Listens, and writes relay.json so the native host can find us. */
  async start(): Promise<void> {
    this.#token = await pairingToken(this.#options.dataDir);
    this.#listener = Deno.listen({
      hostname: "127.0.0.1",
      port: this.#options.port,
    });
    const files = relayFiles(this.#options.dataDir);
    const address = {
      port: this.port,
      pid: Deno.pid,
      started: new Date().toISOString(),
    };
    await Deno.writeTextFile(files.address, JSON.stringify(address), {
      mode: 0o600,
    });
    this.#options.log.info("relay_listening", {
      port: this.port,
      file: files.address,
    });
    void this.#accept(this.#listener);
  }

  async #accept(listener: Deno.TcpListener): Promise<void> {
    try {
      for await (const conn of listener) void this.#serve(conn);
    } catch (error) {
      if (!this.#stopped) {
        this.#options.log.error("relay_accept_failed", {
          error: messageOf(error),
        });
      }
    }
  }

  async #serve(conn: Deno.Conn): Promise<void> {
    // Small until paired: an unknown peer cannot make us buffer 16 MiB.
    const reader = new FrameReader(conn.readable, UNPAIRED_FRAME_MAX);
    const writer = new FrameWriter(conn.writable);
    let session: Session | undefined;
    try {
      const hello = await this.#readHello(reader);
      session = {
        id: this.#nextSession++,
        reader,
        writer,
        conn,
        origin: hello.origin,
        since: new Date().toISOString(),
      };
      reader.maxBytes = PAIRED_FRAME_MAX;
      await writer.write({ type: "paired" });
      this.#adopt(session);
      for (;;) {
        const message = await reader.read();
        if (message === undefined) break;
        this.#onMessage(session, message);
      }
    } catch (error) {
      if (!session) {
        this.#refused++;
        const reason = messageOf(error);
        this.#options.log.warn("relay_refused", { reason });
        await writer.write({ type: "refused", reason }).catch(() => {});
      } else if (!this.#stopped) {
        this.#options.log.warn("relay_read_failed", {
          error: messageOf(error),
        });
      }
    } finally {
      if (session) this.#drop(session);
      try {
        conn.close();
      } catch {
        // already closed
      }
    }
  }

  async #readHello(reader: FrameReader): Promise<{ origin: string }> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new RelayError(`no pairing message within ${HELLO_TIMEOUT_MS} ms`),
          ),
        HELLO_TIMEOUT_MS,
      );
    });
    let first: unknown;
    try {
      first = await Promise.race([reader.read(), timeout]);
    } catch (error) {
      const head = new TextDecoder().decode(reader.pending.subarray(0, 8));
      if (
        error instanceof FrameError &&
        /^(GET|POST|PUT|OPTIONS|HEAD|DELETE|PATCH) /.test(head)
      ) {
        throw new RelayError(
          `an HTTP request (${head.split(" ")[0]}) is not a native host`,
        );
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
    if (
      typeof first !== "object" || first === null || !("type" in first) ||
      first.type !== "pair" || !("token" in first) ||
      typeof first.token !== "string"
    ) {
      throw new RelayError("the first message is not a pairing request");
    }
    if (!sameSecret(first.token, this.#token)) {
      throw new RelayError("wrong pairing token");
    }
    const origin = "origin" in first && typeof first.origin === "string"
      ? first.origin
      : "";
    const id = origin.match(/^chrome-extension:\/\/([a-p]{32})\/?$/)?.[1];
    if (!id || !this.#options.allowedExtensionIds.includes(id)) {
      throw new RelayError(
        `origin "${origin}" is not an allowed extension (allowed: ${
          this.#options.allowedExtensionIds.join(", ")
        })`,
      );
    }
    return { origin };
  }

  /** The newest session whose extension said hello. */
  #current(): Session | undefined {
    return this.#sessions.findLast((session) =>
      session.extension !== undefined
    );
  }

  #adopt(session: Session): void {
    this.#sessions.push(session);
    this.#connections++;
    this.#options.log.info("native_host_paired", {
      session: session.id,
      origin: session.origin,
      open: this.#sessions.length,
    });
  }

  #drop(session: Session): void {
    const index = this.#sessions.indexOf(session);
    if (index === -1) return;
    this.#sessions.splice(index, 1);
    if (session.extension !== undefined) {
      this.#lastDisconnect = new Date().toISOString();
      this.#options.log.warn("extension_disconnected", {
        session: session.id,
        open: this.#sessions.length,
      });
    }
    if (!this.#current()) this.#waitingSince = new Date().toISOString();
    this.#failPending(
      "The companion extension disconnected while the call ran (tab closed, browser quit, or service worker restarted); call again",
      session.id,
    );
  }

  /** Fails the pending calls of one session, or all of them. */
  #failPending(reason: string, session?: number): void {
    for (const [id, pending] of this.#pending) {
      if (session !== undefined && pending.session !== session) continue;
      this.#pending.delete(id);
      pending.reject(new RelayError(reason));
    }
  }

  #onMessage(session: Session, message: unknown): void {
    if (
      typeof message !== "object" || message === null || !("type" in message)
    ) return;
    switch (message.type) {
      case "hello": {
        const fields: Record<string, unknown> = { ...message };
        const text = (key: string) => key in fields ? String(fields[key]) : "";
        const first = session.extension === undefined;
        session.extension = {
          version: text("version"),
          id: text("extension_id"),
          userAgent: text("user_agent"),
        };
        if (first) {
          this.#options.log.info("extension_connected", {
            session: session.id,
            version: session.extension.version,
            extension_id: session.extension.id,
          });
        }
        for (const wake of this.#waiters) wake();
        return;
      }
      case "result": {
        const id = "id" in message && typeof message.id === "number"
          ? message.id
          : -1;
        const pending = this.#pending.get(id);
        // Only the connection a call was sent to may answer it.
        if (!pending || pending.session !== session.id) {
          this.#options.log.debug("relay_result_dropped", {
            session: session.id,
            id,
            reason: pending ? "another connection's call" : "no such call",
          });
          return;
        }
        this.#pending.delete(id);
        if ("ok" in message && message.ok === true) {
          pending.resolve("value" in message ? toJson(message.value) : null);
        } else {
          const error = "error" in message ? String(message.error) : "failed";
          pending.reject(new RelayError(error));
        }
        return;
      }
      case "event": {
        const name = "name" in message ? String(message.name) : "event";
        const data = "data" in message ? toJson(message.data) : null;
        this.#events.push({ time: new Date().toISOString(), name, data });
        if (this.#events.length > RECENT_EVENTS) this.#events.shift();
        const level = name === "console" ? "debug" : "info";
        this.#options.log[level]("extension_event", { name, data });
        return;
      }
      case "daemon":
        return; // the host's note to the extension, echoed by nobody
    }
  }

  /** Resolves once an extension is connected, or rejects after `waitMs`. */
  async #connected(waitMs: number, signal?: AbortSignal): Promise<Session> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const session = this.#current();
      if (session) return session;
      if (this.#stopped) {
        throw new RelayError("The extension relay is shutting down");
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new RelayError(
          `The companion extension is not connected (waiting since ${this.#waitingSince}). ` +
            "Load it in Chrome/Chromium (extension/README.md), run `agentd native-host install`, " +
            "and open or reload a tab to wake it.",
        );
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.#waiters.delete(wake);
          signal?.removeEventListener("abort", wake);
          resolve();
        };
        const timer = setTimeout(wake, Math.min(left, 250));
        this.#waiters.add(wake);
        signal?.addEventListener("abort", wake, { once: true });
      });
      signal?.throwIfAborted();
    }
  }

  /** Runs one extension action; waits up to `waitMs` for the extension, then `timeoutMs` for the answer. */
  async call(
    action: string,
    params: { [key: string]: JsonValue },
    options: { timeoutMs: number; waitMs: number; signal?: AbortSignal },
  ): Promise<JsonValue> {
    const session = await this.#connected(options.waitMs, options.signal);
    const id = this.#nextCall++;
    const { promise, resolve, reject } = Promise.withResolvers<JsonValue>();
    this.#pending.set(id, { session: session.id, resolve, reject, action });
    const timer = setTimeout(() => {
      if (this.#pending.delete(id)) {
        reject(
          new RelayError(
            `The extension did not answer ${action} within ${options.timeoutMs} ms`,
          ),
        );
      }
    }, options.timeoutMs);
    const abort = () => {
      if (this.#pending.delete(id)) {
        reject(new RelayError("The call was cancelled"));
      }
    };
    options.signal?.addEventListener("abort", abort, { once: true });
    try {
      const frame = { type: "call", id, action, params };
      if (JSON.stringify(frame).length > HOST_TO_BROWSER_MAX) {
        throw new RelayError(
          `The ${action} request is over the browser's 1 MiB message limit`,
        );
      }
      await session.writer.write(frame).catch((error) => {
        throw new RelayError(
          `Cannot reach the native host: ${messageOf(error)}`,
        );
      });
      return await promise;
    } finally {
      this.#pending.delete(id);
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", abort);
    }
  }

  health(): { [key: string]: JsonValue } {
    const current = this.#current();
    const extension = current?.extension;
    return {
      extension: this.state,
      extension_version: extension?.version ?? null,
      extension_id: extension?.id ?? null,
      browser: extension?.userAgent ?? null,
      connected_since: current?.since ?? null,
      waiting_since: extension ? null : this.#waitingSince,
      last_disconnect: this.#lastDisconnect ?? null,
      relay_port: this.port,
      pending_calls: this.#pending.size,
      host_connections: this.#connections,
      hosts_open: this.#sessions.length,
      refused_connections: this.#refused,
      recent_events: this.#events.slice(-10),
    };
  }

  /** Shutdown: stop listening, answer pending calls with an error, close the host link. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const wake of this.#waiters) wake();
    this.#failPending(
      "The server shut down before the extension answered",
    );
    try {
      this.#listener?.close();
    } catch {
      // already closed
    }
    for (const session of this.#sessions.splice(0)) {
      try {
        session.conn.close();
      } catch {
        // already closed
      }
    }
    // Leave relay.json only if a newer daemon has not replaced it.
    const files = relayFiles(this.#options.dataDir);
    try {
      const current: unknown = JSON.parse(
        await Deno.readTextFile(files.address),
      );
      if (
        isRelayAddress(current) && current.pid === Deno.pid &&
        current.port === this.port
      ) {
        await Deno.remove(files.address);
      }
    } catch {
      // gone already
    }
  }
}

function toJson(value: unknown): JsonValue {
  return JSON.parse(JSON.stringify(value ?? null));
}
