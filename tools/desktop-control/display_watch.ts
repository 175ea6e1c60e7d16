// Notices a desktop lost while running (the X server ended, the session
// logged out, the permission was withdrawn): the server moves to Error with
// the reason and the fix, the operator is alerted, and the desktop is opened
// again with backoff; once it opens, the server is running again by itself.

import { raiseAlert } from "../../platform/alerts.ts";
import { messageOf } from "../../platform/errors.ts";
import type { Logger } from "../../platform/log.ts";

export interface DisplayWatchOptions {
  /** A cheap round trip to the desktop; says why it cannot be used, if so. */
  check(): Promise<string | undefined>;
  /** Opens the desktop anew and puts it in use; throws while it cannot (saying how to fix). */
  reopen(): Promise<void>;
  setPhase(phase: "running" | "error", reason?: string): void;
  log: Logger;
  webhook?: string | undefined;
  /** How often a running desktop is checked. */
  checkMs: number;
  /** First reopen delay; doubles up to `retryMaxMs`. */
  retryMs: number;
  retryMaxMs: number;
}

export class DisplayWatch {
  readonly #options: DisplayWatchOptions;
  #timer: number | undefined;
  /** Why the desktop is unusable, while it is. */
  #lost: string | undefined;
  #delay: number;
  #stopped = false;
  #busy = false;
  readonly #posts = new Set<Promise<void>>();

  constructor(options: DisplayWatchOptions) {
    this.#options = options;
    this.#delay = options.retryMs;
  }

  /** Why the desktop is unusable right now, if it is. */
  get lost(): string | undefined {
    return this.#lost;
  }

  start(): void {
    this.#arm(this.#options.checkMs);
  }

  /** A call found the desktop gone: act now rather than at the next check. */
  notice(): void {
    if (this.#lost !== undefined || this.#busy || this.#stopped) return;
    this.#cancel();
    this.#arm(0);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#cancel();
    await Promise.all(this.#posts);
  }

  #cancel(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(ms: number): void {
    if (this.#stopped) return;
    this.#timer = Number(setTimeout(() => {
      this.#timer = undefined;
      this.#busy = true;
      const step = this.#lost === undefined ? this.#check() : this.#reopen();
      step.catch((error) =>
        this.#options.log.warn("display_watch_failed", {
          error: messageOf(error),
        })
      ).finally(() => {
        this.#busy = false;
        if (this.#timer === undefined) {
          this.#arm(
            this.#lost === undefined ? this.#options.checkMs : this.#delay,
          );
        }
      });
    }, ms));
  }

  async #check(): Promise<void> {
    const reason = await this.#options.check();
    if (reason === undefined || this.#stopped) return;
    this.#lost = reason;
    this.#delay = this.#options.retryMs;
    const error =
      `${reason}. desktop-control tries to open it again by itself ` +
      `(backing off to every ${
        Math.round(this.#options.retryMaxMs / 1000)
      } s) and runs again once it opens`;
    this.#options.setPhase("error", error);
    this.#alert("problem", { reason });
  }

  async #reopen(): Promise<void> {
    try {
      await this.#options.reopen();
    } catch (error) {
      this.#delay = Math.min(this.#delay * 2, this.#options.retryMaxMs);
      this.#options.log.debug("display_reopen_failed", {
        error: messageOf(error),
        retry_in_ms: this.#delay,
      });
      return;
    }
    if (this.#stopped) return;
    const was = this.#lost;
    this.#lost = undefined;
    this.#options.setPhase("running");
    this.#alert("recovery", { cleared: was ?? "" });
  }

  #alert(severity: "problem" | "recovery", fields: Record<string, string>) {
    const post = raiseAlert(
      { log: this.#options.log, webhook: this.#options.webhook },
      {
        event: severity === "problem"
          ? "desktop_unavailable"
          : "desktop_available",
        source: "desktop-control",
        at: new Date().toISOString(),
        ...fields,
      },
      severity,
    );
    this.#posts.add(post);
    post.finally(() => this.#posts.delete(post));
  }
}
