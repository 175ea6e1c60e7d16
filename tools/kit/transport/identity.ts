// Who a request comes from: the caller identity (and outer session) that
// transports attach to SDK messages as AuthInfo and `createSdkServer` reads back.

import type {
  InMemoryTransport,
  Transport,
} from "../../../platform/mcp_sdk.ts";
import type { JsonValue } from "../../../platform/store/mod.ts";
import type { Caller } from "../../../platform/identity.ts";
import { linkedSession } from "../mod.ts";

/** The identity a transport attaches to a request (from a bearer token), if any. */
export interface RequestAuth {
  caller: Caller;
  /** The raw `Authorization` header, for opted-in gateway pass-through only. */
  authorization?: string;
}

/** The outer session an in-process link forwarded for (set only by trusted code, never by a client). */
export function linkedSessionOf(
  extra: Record<string, unknown> | undefined,
): string | undefined {
  return typeof extra?.session === "string" ? extra.session : undefined;
}

export function callerOf(extra: Record<string, unknown> | undefined): Caller {
  const agent = extra?.agent;
  return typeof agent === "string" ? { agent } : {};
}

/**
 * AuthInfo as the SDK transports carry it. `authorization` (the raw header)
 * is attached only so that an opted-in gateway upstream can receive it.
 */
export function authInfoFor(caller: Caller, authorization?: string) {
  const extra: Record<string, JsonValue> = {};
  if (caller.agent !== undefined) extra.agent = caller.agent;
  return {
    token: authorization ?? "",
    clientId: caller.agent ?? "local",
    scopes: [],
    extra,
  };
}

/** Attaches one identity to every message, as the HTTP face does from a bearer token. */
export class CallerBoundTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport["onmessage"];

  constructor(
    private readonly inner: InMemoryTransport,
    private readonly authInfo: ReturnType<typeof authInfoFor>,
  ) {
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.onerror?.(error);
    inner.onmessage = (message, extra) => this.onmessage?.(message, extra);
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(...[message, options]: Parameters<Transport["send"]>): Promise<void> {
    const session = linkedSession.getStore();
    const authInfo = session === undefined ? this.authInfo : {
      ...this.authInfo,
      extra: { ...this.authInfo.extra, session },
    };
    return this.inner.send(message, { ...options, authInfo });
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
