// An agent's tool call that the policy asks a person about: the turn pauses,
// says so in its stream (`tool_call_waiting` naming the approval), and goes
// on once the operator approves over HTTP; the audit names the agent.

import assert from "node:assert/strict";
import { waitFor } from "../helpers.ts";
import { parseEvents, startStack } from "./stack.ts";

Deno.test("policy: an agent's turn waits for approval and says so in the stream", async () => {
  await using stack = await startStack();
  const guard = stack.hosts.find((host) => host.guard)?.guard;
  assert.ok(guard, "the servers share a policy guard");
  guard.setPolicy({
    rules: [{
      id: "ask-memory-writes",
      server: "memory",
      tool: "store_memory",
      decision: "ask",
    }],
  });
  const created = await stack.request("POST", "/v1/agents", {
    name: "careful",
    tools: ["memory__store_memory"],
  });
  assert.equal(created.status, 201, created.text);
  stack.model.script([
    {
      text: "Let me note that.",
      tool_calls: [{
        name: "memory__store_memory",
        arguments: { namespace: "careful", key: "k", value: "v" },
      }],
    },
    { text: "Stored." },
  ]);
  const streamed = stack.request("POST", "/v1/agents/careful/send", {
    message: "store it",
    stream: true,
  });
  const [pending] = await waitFor(
    () => guard.approvals(),
    (list) => list.some((item) => item.status === "pending"),
  );
  assert.equal(pending.caller, "agent:careful");
  assert.equal(pending.tool, "store_memory");
  const approved = await stack.request(
    "POST",
    `/admin/policy/approvals/${pending.id}/approve`,
    {},
  );
  assert.equal(approved.status, 200, approved.text);
  const reply = await streamed;
  assert.equal(reply.status, 200, reply.text);
  const events = parseEvents(reply.text);
  const kinds = events.map((event) => event.event);
  const waiting = kinds.indexOf("tool_call_waiting");
  assert.ok(
    kinds.indexOf("tool_call_start") < waiting &&
      waiting < kinds.indexOf("tool_call_end"),
    kinds.join(","),
  );
  assert.match(
    String(Reflect.get(Object(events[waiting].data), "message")),
    new RegExp(`approve memory\\.store_memory \\(approval ${pending.id}`),
  );
  const end = Object(events[kinds.indexOf("tool_call_end")].data);
  assert.equal(end.is_error, false, JSON.stringify(end));
  const [record] = await guard.audit.query({ tool: "store_memory" });
  assert.equal(record.caller, "agent:careful");
  assert.equal(record.decision, "approved");
  assert.equal(record.decided_by, "operator (http)");
});
