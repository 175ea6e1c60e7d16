// The scripted model server (tests/agents/model_server.ts) in a process of
// its own, as a provider is, for bench/v1_bench.ts's turns: agentd's model
// calls and the direct baseline's then both cross a process boundary. (Run
// inside the bench's process, the server answered the baseline's calls
// without waking another process, about 0.1 ms less each way than every call
// from agentd; see bench/README.md, /v1 API, "Issue 37, round five".)
//
// It answers by rule, so nothing is scripted between timed calls: after a
// tool result, `text`; to a user message holding TOOL_MARK, `tool`; else
// `text`. Prints one JSON line {"url", "control"}; GET <control>/requests
// hands out (and forgets) the requests recorded since the last time.
//
//   deno run -A bench/model_process.ts '{"tool": <step>, "text": <step>}'

import {
  type ScriptStep,
  startModelServer,
} from "../tests/agents/model_server.ts";

/** In a user message: answer with the tool step. */
export const TOOL_MARK = "[tool step]";

const { tool, text }: { tool: ScriptStep; text: ScriptStep } = JSON.parse(
  Deno.args[0] ?? "{}",
);

function last(body: Record<string, unknown>): Record<string, unknown> {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const message: unknown = messages[messages.length - 1];
  return typeof message === "object" && message !== null
    ? Object.fromEntries(Object.entries(message))
    : {};
}

const model = await startModelServer({
  keep: 64,
  next(body) {
    const message = last(body);
    return message.role === "user" &&
        String(message.content).includes(TOOL_MARK)
      ? tool
      : text;
  },
});
const control = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen() {} },
  (request) =>
    new URL(request.url).pathname === "/requests"
      ? Response.json(model.requests.splice(0))
      : new Response("not found", { status: 404 }),
);
console.log(JSON.stringify({
  url: model.url,
  control: `http://127.0.0.1:${control.addr.port}`,
}));
