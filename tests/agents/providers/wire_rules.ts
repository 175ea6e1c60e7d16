// The request rules the real OpenAI and Anthropic APIs enforce, with their
// error wording, so a provider bug surfaces as the 400 the real API would give.
// Used by tests/agents/model_server.ts.

export interface Problem {
  status?: number;
  message: string;
}

export function openaiProblem(
  body: Record<string, unknown>,
): Problem | undefined {
  if (typeof body.model !== "string" || body.model === "") {
    return { message: "you must provide a model parameter" };
  }
  if (body.stream_options !== undefined && body.stream !== true) {
    return {
      message:
        "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
    };
  }
  if (body.tools !== undefined && list(body.tools).length === 0) {
    return {
      message:
        "Invalid 'tools': empty array. Expected an array with minimum length 1.",
    };
  }
  for (const [i, tool] of list(body.tools).entries()) {
    const fn = isRecord(tool) && tool.type === "function"
      ? tool.function
      : undefined;
    if (
      !isRecord(fn) || typeof fn.name !== "string" ||
      !/^[A-Za-z0-9_-]{1,64}$/.test(fn.name)
    ) {
      return {
        message:
          `Invalid 'tools[${i}].function.name': string does not match pattern.`,
      };
    }
  }
  const messages = list(body.messages);
  if (messages.length === 0) {
    return { message: "Invalid 'messages': empty array." };
  }
  const pending = new Set<string>();
  for (const [i, m] of messages.entries()) {
    if (!isRecord(m)) return { message: `Invalid 'messages[${i}]'.` };
    if (pending.size > 0 && m.role !== "tool") break;
    if (m.role === "assistant") {
      for (const call of list(m.tool_calls)) {
        const fn = isRecord(call) ? call.function : undefined;
        if (
          !isRecord(call) || typeof call.id !== "string" || !isRecord(fn) ||
          typeof fn.arguments !== "string"
        ) {
          return {
            message:
              `Invalid 'messages[${i}].tool_calls': expected {id, type, function: {name, arguments: string}}.`,
          };
        }
        pending.add(call.id);
      }
    } else if (m.role === "tool") {
      if (
        typeof m.tool_call_id !== "string" || !pending.delete(m.tool_call_id)
      ) {
        return {
          message:
            "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
        };
      }
    } else if (!["system", "developer", "user"].includes(String(m.role))) {
      return {
        message:
          `Invalid value: '${m.role}'. Supported values are: 'system', 'assistant', 'user', 'tool', 'developer'.`,
      };
    }
  }
  if (pending.size > 0) {
    return {
      message:
        `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${
          [...pending].join(", ")
        }`,
    };
  }
}

export function anthropicProblem(
  headers: Headers,
  body: Record<string, unknown>,
): Problem | undefined {
  if (!headers.get("x-api-key")) {
    return { status: 401, message: "x-api-key header is required" };
  }
  if (!headers.get("anthropic-version")) {
    return { message: "anthropic-version: header is required" };
  }
  if (typeof body.model !== "string" || body.model === "") {
    return { message: "model: Field required" };
  }
  if (!Number.isInteger(body.max_tokens)) {
    return { message: "max_tokens: Field required" };
  }
  for (const [i, tool] of list(body.tools).entries()) {
    if (
      !isRecord(tool) || typeof tool.name !== "string" ||
      !isRecord(tool.input_schema) || tool.input_schema.type !== "object"
    ) {
      return {
        message:
          `tools.${i}: expected {name, description, input_schema: {type: "object", …}}`,
      };
    }
  }
  const messages = list(body.messages);
  if (messages.length === 0) {
    return { message: "messages: at least one message is required" };
  }
  let expectedResults = new Set<string>();
  for (const [i, m] of messages.entries()) {
    if (!isRecord(m)) return { message: `messages.${i}: expected an object` };
    if (m.role === "system") {
      return {
        message:
          'messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" as an input message role.',
      };
    }
    if (m.role !== (i % 2 === 0 ? "user" : "assistant")) {
      return {
        message:
          `messages.${i}: roles must alternate between "user" and "assistant", starting with "user"`,
      };
    }
    const blocks = typeof m.content === "string"
      ? [{ type: "text", text: m.content }]
      : list(m.content);
    if (blocks.length === 0) {
      return {
        message: `messages.${i}: all messages must have non-empty content`,
      };
    }
    const results = new Set<string>();
    const uses = new Set<string>();
    for (const block of blocks) {
      if (!isRecord(block)) {
        return { message: `messages.${i}.content: expected content blocks` };
      }
      if (block.type === "text" && !block.text) {
        return { message: "messages: text content blocks must be non-empty" };
      }
      if (
        block.type === "tool_use" && typeof block.id === "string" &&
        m.role === "assistant"
      ) uses.add(block.id);
      if (
        block.type === "tool_result" && typeof block.tool_use_id === "string"
      ) results.add(block.tool_use_id);
    }
    const missing = [...expectedResults].filter((id) => !results.has(id));
    if (missing.length) {
      return {
        message:
          `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${
            missing.join(", ")
          }. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
      };
    }
    const unexpected = [...results].filter((id) => !expectedResults.has(id));
    if (unexpected.length) {
      return {
        message:
          `messages.${i}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${
            unexpected.join(", ")
          }. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
      };
    }
    expectedResults = uses;
  }
  if (expectedResults.size > 0) {
    return {
      message:
        `messages: \`tool_use\` ids were found without \`tool_result\` blocks immediately after`,
    };
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
