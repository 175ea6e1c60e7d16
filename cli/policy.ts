// `agentd approve|deny <id>`, `agentd approvals` and `agentd audit`: the
// operator answers pending tool-call approvals and reads the audit trail of
// the running daemon, over HTTP with the daemon token (never an agent token).

import { type FlagSet, parseFlags, UsageError } from "./args.ts";
import { loadSettings } from "./boot.ts";
import type { CliContext } from "./context.ts";

const policyFlags: FlagSet = {
  url: {
    type: "string",
    value: "URL",
    help: "The daemon (default http://<host>:<port> from the config)",
  },
  config: {
    type: "string",
    value: "FILE",
    help: "Config file (default: <config dir>/agentd.json)",
  },
  session: {
    type: "boolean",
    help: "approve: for the rest of the caller's session, not just once",
  },
  help: { type: "boolean", help: "Show this help" },
};

export const POLICY_HELP = `Usage:
  agentd approvals                List pending (and recent) tool-call approvals
  agentd approve <id> [--session] Let a waiting tool call run (once, or for the session)
  agentd deny <id>                Refuse a waiting tool call
  agentd audit                    Print the audit trail as JSON lines

Flags: --url URL (default from the config), --config FILE.
The daemon token comes from AGENTD_TOKEN or the config (token / token_file).`;

export async function runPolicyCommand(
  command: "approve" | "deny" | "approvals" | "audit",
  args: string[],
  ctx: CliContext,
): Promise<number> {
  const { values, positionals } = parseFlags(command, args, policyFlags);
  if (values.help === true) {
    ctx.print(POLICY_HELP);
    return 0;
  }
  const wantsId = command === "approve" || command === "deny";
  if (wantsId && positionals.length !== 1) {
    throw new UsageError(`"agentd ${command}" needs one approval id`, command);
  }
  if (!wantsId && positionals.length > 0) {
    throw new UsageError(`unexpected argument "${positionals[0]}"`, command);
  }
  const settings = await loadSettings({
    flags: typeof values.config === "string" ? { config: values.config } : {},
    specs: await ctx.servers.load(),
    env: ctx.env,
  });
  const base = typeof values.url === "string"
    ? values.url.replace(/\/+$/, "")
    : `http://${
      settings.base.host === "0.0.0.0" ? "127.0.0.1" : settings.base.host
    }:${settings.base.port}`;
  const token = ctx.env.AGENTD_TOKEN || settings.base.token;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "x-agentd-client": "cli",
  };
  if (token) headers.authorization = `Bearer ${token}`;
  let response: Response;
  if (wantsId) {
    const id = encodeURIComponent(positionals[0]);
    response = await fetch(`${base}/admin/policy/approvals/${id}/${command}`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        scope: values.session === true ? "session" : "once",
      }),
    });
  } else {
    const path = command === "audit"
      ? "/admin/policy/audit?format=jsonl"
      : "/admin/policy/approvals";
    response = await fetch(`${base}${path}`, { headers });
  }
  const text = await response.text();
  if (!response.ok) {
    let message = text;
    try {
      message = JSON.parse(text).error?.message ?? text;
    } catch {
      // not JSON: show the body as it came
    }
    throw new UsageError(`${base} answered ${response.status}: ${message}`);
  }
  ctx.print(text.trimEnd());
  return 0;
}
