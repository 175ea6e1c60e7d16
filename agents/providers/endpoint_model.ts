// A Model over one provider endpoint, whatever its wire format: it streams
// when the caller wants text as it comes, else asks for one JSON answer.
import type {
  Model,
  ModelCallOptions,
  ModelRequest,
  ModelResponse,
} from "../model.ts";
import type { Endpoint } from "./http.ts";
import type { SseEvent } from "../../platform/sse.ts";

export interface EndpointModelOptions {
  /** `<provider>/<name>` */
  id: string;
  endpoint: Endpoint;
  /** Appended to the endpoint's base URL. */
  path: string;
  body(
    request: Omit<ModelRequest, "model">,
    stream: boolean,
  ): Record<string, unknown>;
  /** The JSON answer of a request without streaming. */
  parse(endpoint: Endpoint, json: unknown): ModelResponse;
  readStream(
    endpoint: Endpoint,
    events: AsyncIterable<SseEvent>,
    onText: (delta: string) => void,
  ): Promise<ModelResponse>;
}

export function endpointModel(options: EndpointModelOptions): Model {
  const { endpoint, path } = options;
  return {
    id: options.id,
    async complete(
      request: Omit<ModelRequest, "model">,
      call: ModelCallOptions = {},
    ): Promise<ModelResponse> {
      const body = options.body(request, call.onText !== undefined);
      if (call.onText) {
        const events = endpoint.postStream(path, body, call.signal);
        return await options.readStream(endpoint, events, call.onText);
      }
      const json = await endpoint.postJson(path, body, call.signal);
      return options.parse(endpoint, json);
    },
  };
}
