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

/** What a provider's model is made of, whatever its wire format. */
export interface ProviderModelOptions {
  /** `<provider>/<name>` */
  id: string;
  /** The provider's model name. */
  model: string;
  endpoint: Endpoint;
}

/** A provider's wire format: where a request goes, how it is written, how its answer is read. */
export interface WireFormat<O extends ProviderModelOptions> {
  /** Appended to the endpoint's base URL. */
  path: string;
  body(
    request: Omit<ModelRequest, "model">,
    options: O,
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

export function endpointModel<O extends ProviderModelOptions>(
  options: O,
  wire: WireFormat<O>,
): Model {
  const { endpoint } = options;
  const { path } = wire;
  return {
    id: options.id,
    async complete(
      request: Omit<ModelRequest, "model">,
      call: ModelCallOptions = {},
    ): Promise<ModelResponse> {
      const body = wire.body(request, options, call.onText !== undefined);
      if (call.onText) {
        const events = endpoint.postStream(path, body, call.signal);
        return await wire.readStream(endpoint, events, call.onText);
      }
      const json = await endpoint.postJson(path, body, call.signal);
      return wire.parse(endpoint, json);
    },
  };
}
