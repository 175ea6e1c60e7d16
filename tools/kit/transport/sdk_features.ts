// The optional MCP features a spec may declare beside its tools — resources,
// prompts and completion — registered on one SDK server by `createSdkServer`.

import { z } from "zod";
import {
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  type Prompt,
  ReadResourceRequestSchema,
  type Resource,
  type ResourceTemplate,
  type ServerCapabilities,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  UriTemplate,
} from "../../../platform/mcp_sdk_types.ts";
import type { Server } from "../../../platform/mcp_sdk_server.ts";
import { messageOf } from "../../../platform/errors.ts";
import { describeIssues } from "../../../platform/validation.ts";
import type { HostedServer } from "../host.ts";
import type { ListRequest } from "../mod.ts";
import { callerOf } from "./identity.ts";
import {
  capabilitiesOfSpec,
  hasPrompts,
  hasResources,
} from "../capabilities.ts";

const RESOURCE_NOT_FOUND = -32002; // MCP's code for an unknown resource URI

export function capabilitiesOf(host: HostedServer): ServerCapabilities {
  // A server not loaded yet (`serve` loads on first use) says what it will declare.
  return host.facts?.capabilities ?? capabilitiesOfSpec(host.spec);
}

/** Who a request came from, for a run-time resource or prompt. */
function listRequestOf(extra: HandlerExtra): ListRequest {
  return {
    caller: callerOf(extra.authInfo?.extra),
    authorization: extra.authInfo?.token || undefined,
    signal: extra.signal,
  };
}

type HandlerExtra = {
  signal: AbortSignal;
  authInfo?: { token: string; extra?: Record<string, unknown> };
};

export function registerResources(
  server: Server,
  host: HostedServer,
  subscriptions: Set<string>,
): void {
  const resources = host.spec.resources ?? [];
  const templates = (host.spec.resourceTemplates ?? []).map((def) => ({
    def,
    template: new UriTemplate(def.uriTemplate),
  }));
  if (!hasResources(host.spec)) return;

  server.setRequestHandler(ListResourcesRequestSchema, (_request, extra) => ({
    resources: [
      ...resources.map((def): Resource => {
        const listing: Resource = { uri: def.uri, name: def.name };
        if (def.title !== undefined) listing.title = def.title;
        if (def.description !== undefined) {
          listing.description = def.description;
        }
        if (def.mimeType !== undefined) listing.mimeType = def.mimeType;
        return listing;
      }),
      ...host.dynamicResources()?.listResources(
        callerOf(extra.authInfo?.extra),
      ) ?? [],
    ],
  }));

  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: templates.map(({ def }): ResourceTemplate => {
      const listing: ResourceTemplate = {
        uriTemplate: def.uriTemplate,
        name: def.name,
      };
      if (def.title !== undefined) listing.title = def.title;
      if (def.description !== undefined) listing.description = def.description;
      if (def.mimeType !== undefined) listing.mimeType = def.mimeType;
      return listing;
    }),
  }));

  function knownUri(uri: string): boolean {
    return resources.some((def) => def.uri === uri) ||
      templates.some(({ template }) => template.match(uri) !== null);
  }

  server.setRequestHandler(
    ReadResourceRequestSchema,
    async (request, extra) => {
      const uri = request.params.uri;
      const url = parseUri(uri);
      const context = contextOrMcpError(host);
      const direct = resources.find((def) => def.uri === uri);
      if (direct) return { contents: await direct.read(context, url) };
      const dynamic = host.dynamicResources();
      if (dynamic?.hasResource(uri)) {
        return await dynamic.readResource(uri, listRequestOf(extra));
      }
      for (const { def, template } of templates) {
        const variables = template.match(uri);
        if (variables) {
          return {
            contents: await def.read(
              context,
              url,
              variables,
              listRequestOf(extra),
            ),
          };
        }
      }
      throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}`, {
        uri,
      });
    },
  );

  server.setRequestHandler(SubscribeRequestSchema, (request) => {
    // Run-time resources (an upstream's, through the gateway) send no updates here.
    if (host.dynamicResources()?.hasResource(request.params.uri)) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Resource ${request.params.uri} takes no subscriptions here`,
      );
    }
    if (!knownUri(request.params.uri)) {
      throw new McpError(
        RESOURCE_NOT_FOUND,
        `Resource not found: ${request.params.uri}`,
      );
    }
    subscriptions.add(request.params.uri);
    return {};
  });

  server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    subscriptions.delete(request.params.uri);
    return {};
  });
}

export function registerPrompts(server: Server, host: HostedServer): void {
  const prompts = host.spec.prompts ?? [];
  if (!hasPrompts(host.spec)) return;

  server.setRequestHandler(ListPromptsRequestSchema, (_request, extra) => ({
    prompts: [
      ...prompts.map((def): Prompt => {
        const listing: Prompt = { name: def.name };
        if (def.title !== undefined) listing.title = def.title;
        if (def.description !== undefined) {
          listing.description = def.description;
        }
        if (def.args) {
          listing.arguments = Object.entries(def.args.shape).map(
            ([name, schema]) => {
              const argument: {
                name: string;
                description?: string;
                required: boolean;
              } = {
                name,
                required: !schema.safeParse(undefined).success,
              };
              if (schema.description !== undefined) {
                argument.description = schema.description;
              }
              return argument;
            },
          );
        }
        return listing;
      }),
      ...host.dynamicPrompts()?.listPrompts(
        callerOf(extra.authInfo?.extra),
      ) ?? [],
    ],
  }));

  server.setRequestHandler(GetPromptRequestSchema, async (request, extra) => {
    const def = prompts.find((prompt) => prompt.name === request.params.name);
    const dynamic = host.dynamicPrompts();
    if (!def && dynamic?.hasPrompt(request.params.name)) {
      return await dynamic.getPrompt(
        request.params.name,
        request.params.arguments ?? {},
        listRequestOf(extra),
      );
    }
    if (!def) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown prompt "${request.params.name}"`,
      );
    }
    const context = contextOrMcpError(host);
    const args = def.args ?? z.object({});
    const parsed = args.strict().safeParse(request.params.arguments ?? {});
    if (!parsed.success) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Invalid arguments for prompt ${def.name}: ${
          describeIssues(parsed.error)
        }`,
      );
    }
    return await def.get(context, parsed.data);
  });
}

/** Completion of prompt arguments and resource template variables. */
export function registerCompletion(server: Server, host: HostedServer): void {
  const prompts = host.spec.prompts ?? [];
  const templates = host.spec.resourceTemplates ?? [];
  if (prompts.length + templates.length === 0) return;
  server.setRequestHandler(CompleteRequestSchema, async (request) => {
    const context = contextOrMcpError(host);
    const { ref, argument } = request.params;
    let values: string[] = [];
    if (ref.type === "ref/resource") {
      const def = templates.find((template) =>
        template.uriTemplate === ref.uri
      );
      if (def?.complete) {
        values = await def.complete(context, argument.name, argument.value);
      }
    } else {
      const def = prompts.find((prompt) => prompt.name === ref.name);
      if (def?.complete) {
        values = await def.complete(context, argument.name, argument.value);
      }
    }
    return completion(values);
  });
}

function completion(values: string[]) {
  const MAX = 100; // the spec caps a completion response at 100 values
  return {
    completion: {
      values: values.slice(0, MAX),
      total: values.length,
      hasMore: values.length > MAX,
    },
  };
}

function contextOrMcpError(host: HostedServer): unknown {
  try {
    return host.context();
  } catch (error) {
    throw new McpError(ErrorCode.InternalError, messageOf(error));
  }
}

function parseUri(uri: string): URL {
  try {
    return new URL(uri);
  } catch {
    throw new McpError(ErrorCode.InvalidParams, `Invalid resource URI: ${uri}`);
  }
}
