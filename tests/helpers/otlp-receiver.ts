/**
 * An OTLP/HTTP receiver on 127.0.0.1 that decodes what OpenTelemetry's JSON exporters send (`/v1/metrics`,
 * `/v1/traces`; protobuf bodies are recorded but not decoded) into flat lists of data points and spans.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean };
type KeyValue = { key: string; value: AnyValue };

export interface DataPoint {
  metric: string;
  unit?: string;
  value: number;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
}

export interface ReceivedSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
  status?: { code?: number };
}

export interface OtlpReceiver {
  url: string;
  /** Every request's path, content type and raw body. */
  requests: Array<{ path: string; contentType: string; body: string }>;
  points(): DataPoint[];
  spans(): ReceivedSpan[];
  close(): Promise<void>;
}

function valueOf(v: AnyValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  return undefined;
}

const attrs = (list: KeyValue[] | undefined) => Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]));

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const requests: OtlpReceiver['requests'] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    requests.push({ path: req.url ?? '', contentType: String(req.headers['content-type'] ?? ''), body: Buffer.concat(chunks).toString('utf8') });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const json = (path: string) => requests.filter((r) => r.path === path && r.contentType.includes('json')).map((r) => JSON.parse(r.body));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    points() {
      const out: DataPoint[] = [];
      for (const body of json('/v1/metrics')) {
        for (const rm of body.resourceMetrics ?? []) {
          const resource = attrs(rm.resource?.attributes);
          for (const sm of rm.scopeMetrics ?? []) {
            for (const metric of sm.metrics ?? []) {
              const data = metric.sum ?? metric.gauge ?? metric.histogram;
              for (const dp of data?.dataPoints ?? []) {
                out.push({ metric: metric.name, unit: metric.unit, value: Number(dp.asDouble ?? dp.asInt ?? dp.sum ?? 0), attributes: attrs(dp.attributes), resource });
              }
            }
          }
        }
      }
      return out;
    },
    spans() {
      const out: ReceivedSpan[] = [];
      for (const body of json('/v1/traces')) {
        for (const rs of body.resourceSpans ?? []) {
          const resource = attrs(rs.resource?.attributes);
          for (const ss of rs.scopeSpans ?? []) {
            for (const span of ss.spans ?? []) {
              out.push({ name: span.name, traceId: span.traceId, spanId: span.spanId, parentSpanId: span.parentSpanId || undefined, attributes: attrs(span.attributes), resource, status: span.status });
            }
          }
        }
      }
      return out;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
