/**
 * A decoder for OTLP's `ExportTraceServiceRequest` in protobuf, written from the field numbers of
 * opentelemetry-proto (`collector/trace/v1`, `trace/v1`, `common/v1`) rather than taken from the
 * exporter's own code, so a wrong field on the sending side shows. It returns the shape OTLP/JSON
 * has (ids in hex, `intValue` as text), so one receiver reads both protocols alike.
 */

type Value = bigint | Uint8Array;

/** A message's fields by number, each with every value it had (repeated fields). */
function fields(bytes: Uint8Array): Map<number, Value[]> {
  const found = new Map<number, Value[]>();
  let at = 0;
  const varint = (): bigint => {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = bytes[at++];
      if (byte === undefined) throw new Error('protobuf: truncated varint');
      value |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return value;
    }
  };
  const take = (length: number): Uint8Array => {
    if (at + length > bytes.length) throw new Error('protobuf: truncated field');
    const slice = bytes.subarray(at, at + length);
    at += length;
    return slice;
  };
  while (at < bytes.length) {
    const key = Number(varint());
    const wire = key & 7;
    const value =
      wire === 0
        ? varint()
        : wire === 1
          ? take(8)
          : wire === 2
            ? take(Number(varint()))
            : wire === 5
              ? take(4)
              : undefined;
    if (value === undefined) throw new Error(`protobuf: unexpected wire type ${wire}`);
    const number = key >>> 3;
    found.set(number, [...(found.get(number) ?? []), value]);
  }
  return found;
}

const bytesOf = (message: Map<number, Value[]>, field: number): Uint8Array[] =>
  (message.get(field) ?? []).filter((v): v is Uint8Array => v instanceof Uint8Array);
const first = (message: Map<number, Value[]>, field: number) => bytesOf(message, field)[0];
const text = (bytes: Uint8Array | undefined) => (bytes ? Buffer.from(bytes).toString('utf8') : '');
const hex = (bytes: Uint8Array | undefined) => (bytes ? Buffer.from(bytes).toString('hex') : '');
const number = (message: Map<number, Value[]>, field: number) =>
  Number((message.get(field) ?? [0n])[0] as bigint);

/** `KeyValue { key = 1; AnyValue value = 2 }`, AnyValue's scalar cases as OTLP/JSON writes them. */
function attributes(message: Map<number, Value[]>, field: number) {
  return bytesOf(message, field).map((bytes) => {
    const pair = fields(bytes);
    const value = fields(first(pair, 2) ?? new Uint8Array());
    const scalar = value.has(1)
      ? { stringValue: text(first(value, 1)) }
      : value.has(2)
        ? { boolValue: number(value, 2) === 1 }
        : value.has(3)
          ? { intValue: BigInt.asIntN(64, value.get(3)?.[0] as bigint).toString() }
          : value.has(4)
            ? { doubleValue: Buffer.from(first(value, 4) as Uint8Array).readDoubleLE(0) }
            : {};
    return { key: text(first(pair, 1)), value: scalar };
  });
}

/** Decodes one export body into `{ resourceSpans: [...] }` as OTLP/JSON would have it. */
export function decodeTraceRequest(body: Uint8Array) {
  return {
    resourceSpans: bytesOf(fields(body), 1).map((resourceBytes) => {
      const resourceSpans = fields(resourceBytes);
      const resource = fields(first(resourceSpans, 1) ?? new Uint8Array());
      return {
        resource: { attributes: attributes(resource, 1) },
        scopeSpans: bytesOf(resourceSpans, 2).map((scopeBytes) => ({
          spans: bytesOf(fields(scopeBytes), 2).map((spanBytes) => {
            const span = fields(spanBytes);
            return {
              traceId: hex(first(span, 1)),
              spanId: hex(first(span, 2)),
              parentSpanId: hex(first(span, 4)),
              name: text(first(span, 5)),
              kind: number(span, 6),
              attributes: attributes(span, 9),
              links: bytesOf(span, 13).map((linkBytes) => {
                const link = fields(linkBytes);
                return { traceId: hex(first(link, 1)), spanId: hex(first(link, 2)) };
              }),
            };
          }),
        })),
      };
    }),
  };
}
