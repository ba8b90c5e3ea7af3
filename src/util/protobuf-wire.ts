// The two pieces of the protobuf wire format podvisor writes by hand (a gRPC health request and
// the like): a varint and a length-delimited field. The messages are tiny
// and fixed, so a protobuf library and its generated types would be all cost and no help.

/** An unsigned varint. */
export function varint(n: number): Buffer {
  const out: number[] = [];
  let v = n;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return Buffer.from(out);
}

/** A length-delimited field (wire type 2): a string, bytes or an embedded message. */
export function lengthDelimited(field: number, value: string | Buffer): Buffer {
  const b = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  return Buffer.concat([varint((field << 3) | 2), varint(b.length), b]);
}
