/**
 * The protobuf wire format (varints, fixed 32/64-bit values, length-delimited fields), enough to
 * walk any message field by field. The OTLP message layouts that give the fields their meaning
 * are in otlp-trace-messages.ts.
 */
export interface WireField {
  number: number;
  /** 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32. */
  wireType: number;
  /** varint (as a bigint: int64 values need all 64 bits), fixed64 and fixed32 as their raw bytes. */
  varint?: bigint;
  bytes?: Uint8Array;
}

export function* wireFields(buffer: Uint8Array): Generator<WireField> {
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (pos >= buffer.length) throw new Error("truncated varint");
      const byte = buffer[pos++] as number;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  const take = (length: number): Uint8Array => {
    if (pos + length > buffer.length) throw new Error("truncated field");
    const bytes = buffer.subarray(pos, pos + length);
    pos += length;
    return bytes;
  };
  while (pos < buffer.length) {
    const tag = Number(varint());
    const number = tag >>> 3;
    const wireType = tag & 7;
    if (wireType === 0) yield { number, wireType, varint: varint() };
    else if (wireType === 1) yield { number, wireType, bytes: take(8) };
    else if (wireType === 2) yield { number, wireType, bytes: take(Number(varint())) };
    else if (wireType === 5) yield { number, wireType, bytes: take(4) };
    else throw new Error(`unsupported wire type ${wireType}`);
  }
}

const text = new TextDecoder();

export const asString = (field: WireField): string => text.decode(field.bytes);
export const asHex = (field: WireField): string => Buffer.from(field.bytes ?? []).toString("hex");
export const asDouble = (field: WireField): number => Buffer.from(field.bytes ?? []).readDoubleLE(0);
export const asFixed64 = (field: WireField): bigint => Buffer.from(field.bytes ?? []).readBigUInt64LE(0);
/** A varint read as the two's complement int64 it encodes. */
export const asInt64 = (field: WireField): bigint => BigInt.asIntN(64, field.varint ?? 0n);
