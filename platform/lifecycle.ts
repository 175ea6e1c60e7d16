// Lifecycle: each server's phases (starting, running, error, stopping), in-flight call tracking for
// draining, and the process-level shutdown on SIGINT/SIGTERM.

export type Phase = "start" | "running" | "error" | "shutdown";

export interface PhaseState {
  phase: Phase;
  /** ISO time the phase was entered. */
  since: string;
  /** Why the server is in `error`; absent otherwise. */
  error?: string;
}

export class PhaseTracker {
  #state: PhaseState;
  readonly #clock: () => number;
  readonly #onChange?: (state: PhaseState, previous: PhaseState) => void;

  constructor(
    options: {
      clock?: () => number;
      onChange?: (state: PhaseState, previous: PhaseState) => void;
    } = {},
  ) {
    this.#clock = options.clock ?? Date.now;
    this.#onChange = options.onChange;
    this.#state = {
      phase: "start",
      since: new Date(this.#clock()).toISOString(),
    };
  }

  get state(): PhaseState {
    return this.#state;
  }

  get phase(): Phase {
    return this.#state.phase;
  }

  set(phase: Phase, error?: string): void {
    const previous = this.#state;
    this.#state = { phase, since: new Date(this.#clock()).toISOString() };
    if (error !== undefined) this.#state.error = error;
    this.#onChange?.(this.#state, previous);
  }
}

/** Counts calls that are running so shutdown can wait for them. */
export class InFlight {
  #count = 0;
  #waiters: (() => void)[] = [];

  get count(): number {
    return this.#count;
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    const done = this.begin();
    try {
      return await fn();
    } finally {
      done();
    }
  }

  /** Counts one unit of work until the returned function is called (once). */
  begin(): () => void {
    this.#count++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#count--;
      if (this.#count === 0) {
        for (const wake of this.#waiters.splice(0)) wake();
      }
    };
  }

  /** Resolves true once nothing runs, or false when `timeoutMs` passes first. */
  idle(timeoutMs: number): Promise<boolean> {
    if (this.#count === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== wake);
        resolve(false);
      }, timeoutMs);
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.#waiters.push(wake);
    });
  }
}

export type ShutdownSignal = "SIGINT" | "SIGTERM";

/**
 * Repeats within this many ms of the first signal are the same Ctrl-C: the
 * terminal signals the whole process group and `deno task` forwards it too,
 * so one key press arrives twice at once. Only a later signal forces exit.
 */
export const REPEAT_SIGNAL_WINDOW_MS = 1000;

export interface SignalGate {
  /** What to do with a signal received at `now` (ms, monotonic). */
  receive(now: number): "shutdown" | "ignore" | "exit";
}

/**
 * The decision behind onShutdownSignal, apart from the process: the first
 * signal shuts down, repeats inside `windowMs` are ignored, a later one exits.
 */
export function signalGate(
  windowMs: number = REPEAT_SIGNAL_WINDOW_MS,
): SignalGate {
  let first: number | undefined;
  return {
    receive(now) {
      if (first === undefined) {
        first = now;
        return "shutdown";
      }
      return now - first < windowMs ? "ignore" : "exit";
    },
  };
}

/**
 * Calls `onSignal` once on the first SIGINT/SIGTERM. A second signal at least
 * REPEAT_SIGNAL_WINDOW_MS later (a deliberate second Ctrl-C) exits at once
 * (130), the usual escape hatch for a stuck drain; earlier repeats are the
 * same key press delivered twice and are ignored.
 * Returns a function that removes the listeners.
 */
export function onShutdownSignal(
  onSignal: (signal: ShutdownSignal) => void,
  onRepeat?: (signal: ShutdownSignal, action: "ignore" | "exit") => void,
): () => void {
  const signals: ShutdownSignal[] = Deno.build.os === "windows"
    ? ["SIGINT"]
    : ["SIGINT", "SIGTERM"];
  const gate = signalGate();
  const listeners = signals.map((signal) => {
    const listener = () => {
      const action = gate.receive(performance.now());
      if (action === "shutdown") return onSignal(signal);
      onRepeat?.(signal, action);
      if (action === "exit") Deno.exit(130);
    };
    Deno.addSignalListener(signal, listener);
    return { signal, listener };
  });
  return () => {
    for (const { signal, listener } of listeners) {
      Deno.removeSignalListener(signal, listener);
    }
  };
}
