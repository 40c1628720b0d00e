/**
 * A real OTLP/HTTP trace receiver for the tests: a node:http server taking POST /v1/traces,
 * decoding the ExportTraceServiceRequest with the protobuf definitions generated from the
 * official OTLP protos (shipped in @opentelemetry/otlp-transformer, installed under an alias as
 * a dev dependency), keeping every span it gets. It refuses anything but protobuf: the SDK's
 * default protocol, http/protobuf, is what the tests check.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import otlpRoot from 'otlp-proto-definitions/build/src/generated/root.js';

interface AnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string | { toNumber(): number };
  doubleValue?: number;
}
interface KeyValue {
  key: string;
  value?: AnyValue;
}
interface DecodedSpan {
  traceId: Uint8Array;
  spanId: Uint8Array;
  parentSpanId?: Uint8Array;
  name: string;
  kind: number;
  attributes?: KeyValue[];
  events?: { name: string; attributes?: KeyValue[] }[];
  links?: { traceId: Uint8Array; spanId: Uint8Array }[];
  status?: { code?: number; message?: string };
}
interface DecodedRequest {
  resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: DecodedSpan[] }[] }[];
}

const ExportTraceServiceRequest = (
  otlpRoot as unknown as {
    opentelemetry: {
      proto: {
        collector: {
          trace: { v1: { ExportTraceServiceRequest: { decode(bytes: Uint8Array): unknown; toObject(message: unknown, options: object): DecodedRequest } } };
        };
      };
    };
  }
).opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

export type Scalar = string | number | boolean;

/** A received span, with ids as lower-case hex (as in `traceparent`). */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, Scalar>;
  events: { name: string; attributes: Record<string, Scalar> }[];
  links: { traceId: string; spanId: string }[];
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  resource: Record<string, Scalar>;
}

export const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const;

const hex = (bytes: Uint8Array | undefined) => (bytes === undefined ? '' : Buffer.from(bytes).toString('hex'));

function scalar(value: AnyValue | undefined): Scalar {
  if (value === undefined) return '';
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.doubleValue !== undefined) return value.doubleValue;
  const int = value.intValue;
  return typeof int === 'object' && int !== null ? int.toNumber() : Number(int ?? 0);
}

const attributesOf = (list: KeyValue[] | undefined) => Object.fromEntries((list ?? []).map((kv) => [kv.key, scalar(kv.value)]));

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Content types of the export requests received (the default exporter sends application/x-protobuf). */
  readonly contentTypes: string[] = [];
  readonly #server: Server;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(): Promise<OtlpReceiver> {
    const receiver: OtlpReceiver = new OtlpReceiver(
      createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {
          const type = String(request.headers['content-type'] ?? '');
          if (request.method !== 'POST' || request.url !== '/v1/traces') {
            response.writeHead(404).end();
            return;
          }
          try {
            receiver.#accept(type, Buffer.concat(chunks));
            response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(); // an empty ExportTraceServiceResponse
          } catch (err) {
            response.writeHead(400, { 'content-type': 'text/plain' }).end(String(err));
          }
        });
      }),
    );
    await new Promise<void>((resolve) => receiver.#server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  /** The base URL to set as OTEL_EXPORTER_OTLP_ENDPOINT (the exporter appends /v1/traces). */
  get endpoint(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }

  #accept(contentType: string, body: Buffer): void {
    this.contentTypes.push(contentType);
    if (!contentType.startsWith('application/x-protobuf')) throw new Error(`this receiver decodes protobuf only, got ${contentType}`);
    const decoded = ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(body), { defaults: false, arrays: true });
    for (const resourceSpans of decoded.resourceSpans ?? []) {
      const resource = attributesOf(resourceSpans.resource?.attributes);
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          this.spans.push({
            traceId: hex(span.traceId),
            spanId: hex(span.spanId),
            parentSpanId: span.parentSpanId === undefined || span.parentSpanId.length === 0 ? null : hex(span.parentSpanId),
            name: span.name,
            kind: span.kind,
            attributes: attributesOf(span.attributes),
            events: (span.events ?? []).map((e) => ({ name: e.name, attributes: attributesOf(e.attributes) })),
            links: (span.links ?? []).map((l) => ({ traceId: hex(l.traceId), spanId: hex(l.spanId) })),
            status: { code: span.status?.code ?? 0, message: span.status?.message ?? '' },
            resource,
          });
        }
      }
    }
  }
}
