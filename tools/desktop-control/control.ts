// The desktop-control server's context: one desktop, calls one at a time,
// every action logged with its time, every file operation audited, and use
// off loopback refused unless the config allows it.

import { isLoopback } from "../../platform/http_guards.ts";
import type { Logger } from "../../platform/log.ts";
import { Mutex } from "../../platform/mutex.ts";
import { messageOf } from "../../platform/errors.ts";
import type { JsonValue } from "../../platform/store/mod.ts";
import { type CallContext, ToolError } from "../kit/mod.ts";
import type { DesktopControlConfig } from "./config.ts";
import type { OpenedDesktop } from "./backends/open.ts";
import type { Clipboard, Desktop, Point } from "./backends/port.ts";
import { ImageEncoder } from "./image.ts";
import { FileSandbox } from "./sandbox.ts";
import {
  type CoordinateSpace,
  imageToScreen,
  type Shot,
  ShotLedger,
} from "./shots.ts";

type Details = { [key: string]: JsonValue };

export class DesktopControl {
  readonly config: DesktopControlConfig;
  #desktop: Desktop;
  #clipboard: Clipboard;
  readonly files: FileSandbox;
  readonly shots = new ShotLedger();
  readonly encoder: ImageEncoder;
  readonly #log: Logger;
  readonly #address: () => string | undefined;
  readonly #lock = new Mutex();
  #actions = 0;
  #failed = 0;
  #fileOps = 0;
  #lastTyping = 0;
  #stopped = false;
  #noticeLost: () => void = () => {};

  constructor(
    config: DesktopControlConfig,
    options: {
      desktop: Desktop;
      clipboard: Clipboard;
      log: Logger;
      address: () => string | undefined;
    },
  ) {
    this.config = config;
    this.#desktop = options.desktop;
    this.#clipboard = options.clipboard;
    this.#log = options.log;
    this.#address = options.address;
    this.encoder = new ImageEncoder({ turbojpeg: config.turbojpeg });
    this.files = new FileSandbox({
      roots: config.allowed_roots,
      maxReadBytes: config.max_read_bytes,
      maxWriteBytes: config.max_write_bytes,
    });
  }

  /** The desktop in use (replaced when a lost display is opened again). */
  get desktop(): Desktop {
    return this.#desktop;
  }

  get clipboard(): Clipboard {
    return this.#clipboard;
  }

  /** `notice` is told when a call finds the desktop gone (the display watch). */
  watchLost(notice: () => void): void {
    this.#noticeLost = notice;
  }

  /** A cheap round trip to the desktop between calls: why it cannot be used, if so. */
  async check(): Promise<string | undefined> {
    return await this.#lock.run(() => {
      if (!this.#stopped) this.#desktop.ping?.();
      return Promise.resolve(this.#desktop.unavailable?.());
    });
  }

  /** Puts a desktop opened again in use; the lost one is released. */
  async replace(opened: OpenedDesktop): Promise<void> {
    await this.#lock.run(async () => {
      // Stopped meanwhile: the new one is released instead.
      const old = this.#stopped ? opened : {
        desktop: this.#desktop,
        clipboard: this.#clipboard,
      };
      if (!this.#stopped) {
        this.#desktop = opened.desktop;
        this.#clipboard = opened.clipboard;
      }
      await old.clipboard.close().catch(() => {});
      old.desktop.close();
    });
  }

  /** Why calls are refused right now (listening off loopback without allow_remote), if they are. */
  remoteRefusal(): string | undefined {
    if (this.config.allow_remote) return undefined;
    const address = this.#address();
    if (address === undefined) return undefined;
    let host: string;
    try {
      host = new URL(address).hostname.replace(/^\[|\]$/g, "");
    } catch {
      return undefined;
    }
    if (isLoopback(host)) return undefined;
    return `desktop-control refuses calls while this process listens off loopback (${address}): ` +
      "anyone reaching the port could drive this desktop. Bind 127.0.0.1, or set desktop-control " +
      "allow_remote: true (--allow-remote) to accept it.";
  }

  /** The key of the caller's screenshot history: MCP session, else agent, else shared. */
  session(call: CallContext): string {
    if (call.sessionId) return `session:${call.sessionId}`;
    if (call.caller.agent) return `agent:${call.caller.agent}`;
    return "default";
  }

  /** Runs one desktop action under the lock, logging it (never typed text or file content). */
  async act<T>(
    call: CallContext,
    tool: string,
    details: Details,
    body: () => T | Promise<T>,
  ): Promise<T> {
    const refusal = this.remoteRefusal();
    if (refusal) throw new ToolError(refusal);
    return await this.#lock.run(async () => {
      const gone = this.desktop.unavailable?.();
      if (gone) {
        this.#noticeLost();
        throw new ToolError(`${tool} failed: ${gone}`);
      }
      const started = performance.now();
      const session = this.session(call);
      this.#actions++;
      try {
        const value = await body();
        // The display may have gone away during the call: its result is not to be trusted.
        const lost = this.desktop.unavailable?.();
        if (lost) {
          this.#noticeLost();
          throw new ToolError(`${tool} failed: ${lost}`);
        }
        this.#log.info("desktop_action", {
          tool,
          session,
          ...details,
          ok: true,
          duration_ms: Math.round(performance.now() - started),
        });
        return value;
      } catch (error) {
        this.#failed++;
        this.#log.warn("desktop_action", {
          tool,
          session,
          ...details,
          ok: false,
          error: messageOf(error),
          duration_ms: Math.round(performance.now() - started),
        });
        if (error instanceof ToolError) throw error;
        const lost = this.desktop.unavailable?.();
        if (lost) this.#noticeLost();
        throw new ToolError(`${tool} failed: ${lost ?? messageOf(error)}`);
      }
    });
  }

  /** A file operation, audited with path, bytes and outcome. */
  async fileOp<T extends { bytes: number; path: string }>(
    call: CallContext,
    op: "read" | "write",
    path: string,
    body: () => Promise<T>,
  ): Promise<T> {
    const refusal = this.remoteRefusal();
    if (refusal) throw new ToolError(refusal);
    this.#fileOps++;
    try {
      const result = await body();
      this.#log.info("file_audit", {
        op,
        path,
        resolved: result.path,
        bytes: result.bytes,
        outcome: "ok",
        session: this.session(call),
      });
      return result;
    } catch (error) {
      this.#log.warn("file_audit", {
        op,
        path,
        outcome: "refused_or_failed",
        error: messageOf(error),
        session: this.session(call),
      });
      throw new ToolError(`file_${op} failed: ${messageOf(error)}`);
    }
  }

  noteTyping(): void {
    this.#lastTyping = Date.now();
  }

  /**
   * Screen pixels for a point given in `space`: image coordinates of the
   * named (or the session's last) screenshot, or screen pixels.
   */
  toScreen(
    call: CallContext,
    point: Point,
    space: CoordinateSpace,
    screenshotId: string | undefined,
    field: string,
  ): { screen: Point; shot: Shot | undefined } {
    let shot: Shot | undefined;
    let screen = point;
    if (space === "image") {
      shot = this.shots.shotFor(this.session(call), screenshotId);
      if (shot) screen = imageToScreen(shot, point, field);
    }
    const bounds = this.desktop.screen();
    if (
      screen.x < bounds.x || screen.y < bounds.y ||
      screen.x >= bounds.x + bounds.width ||
      screen.y >= bounds.y + bounds.height
    ) {
      throw new Error(
        `${field} (${screen.x}, ${screen.y}) is off the screen (${bounds.width}×${bounds.height})`,
      );
    }
    return { screen, shot };
  }

  health(): Details {
    const refusal = this.remoteRefusal();
    let desktop: Details;
    try {
      desktop = this.desktop.health();
    } catch (error) {
      desktop = { error: messageOf(error) };
    }
    return {
      status: refusal || "error" in desktop ? "degraded" : "ok",
      summary: desktopSummary(this.desktop.platform, desktop, refusal),
      platform: this.desktop.platform,
      desktop,
      clipboard: {
        via: this.clipboard.via,
        available: this.clipboard.available,
      },
      files: {
        allowed_roots: [...this.files.configuredRoots],
        missing_roots: [...this.files.missingRoots],
        max_read_bytes: this.config.max_read_bytes,
        max_write_bytes: this.config.max_write_bytes,
        operations: this.#fileOps,
      },
      screenshots: {
        max_long_side: this.config.max_long_side,
        default_format: this.config.screenshot_format,
        jpeg_encoder: this.encoder.jpegEncoder,
      },
      remote: refusal
        ? "refused"
        : this.config.allow_remote
        ? "allowed"
        : "loopback only",
      ...(refusal ? { remote_refusal: refusal } : {}),
      actions: { count: this.#actions, failed: this.#failed },
    };
  }

  async stop(): Promise<void> {
    await this.#lock.run(async () => {
      this.#stopped = true;
      // Let the focused client read keys bound a moment ago before they are unbound.
      const sinceTyping = Date.now() - this.#lastTyping;
      if (sinceTyping < 500) {
        await new Promise((resolve) => setTimeout(resolve, 500 - sinceTyping));
      }
      await this.clipboard.close();
      this.desktop.close();
      this.encoder.close();
    });
  }
}

/** The dashboard's one line for this server: which display, how big, and what blocks it. */
function desktopSummary(
  platform: string,
  desktop: Details,
  refusal: string | undefined,
): string {
  if (typeof desktop.error === "string") return desktop.error;
  const screen = desktop.screen;
  const size = typeof screen === "object" && screen !== null &&
      !Array.isArray(screen)
    ? ` · ${screen.width}×${screen.height}`
    : "";
  const where = typeof desktop.display === "string"
    ? `display ${desktop.display}`
    : `${platform} desktop`;
  return where + size + (refusal ? ` · ${refusal}` : "");
}
