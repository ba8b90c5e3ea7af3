// The SPDY/3.1 framer against hand-built frames: a client's SYN_STREAM (headers compressed with the
// protocol dictionary, as Go's spdystream sends them), DATA with FIN, PING; the server's SYN_REPLY
// decompresses with the same dictionary.

import assert from 'node:assert/strict';
import { createServer, connect, type Socket } from 'node:net';
import { test } from 'node:test';
import { constants as zc, createDeflate, createInflate } from 'node:zlib';
import {
  controlFrame,
  dataFrame,
  decodeHeaderBlock,
  encodeHeaderBlock,
  FLAG_FIN,
  FrameType,
  parseFrames,
  SPDY_DICTIONARY,
  SpdySession,
  type SpdyStream,
} from '../../src/spdy/framer.js';
import { waitFor } from '../fixtures/wait.js';

function flushed(z: ReturnType<typeof createDeflate> | ReturnType<typeof createInflate>, input: Buffer): Promise<Buffer> {
  return new Promise((resolve) => {
    z.write(input);
    z.flush(zc.Z_SYNC_FLUSH, () => {
      const out: Buffer[] = [];
      let c;
      while ((c = z.read()) !== null) out.push(c as Buffer);
      resolve(Buffer.concat(out));
    });
  });
}

test('the dictionary has the SPDY/3 size', () => {
  assert.equal(SPDY_DICTIONARY.length, 1423);
});

test('header blocks round-trip', () => {
  assert.deepEqual(decodeHeaderBlock(encodeHeaderBlock({ streamtype: 'stdout', port: '80' })), { streamtype: 'stdout', port: '80' });
});

test('a session accepts streams, replies, carries data both ways and answers PING', async () => {
  const sessions: SpdySession[] = [];
  const server = createServer((sock) => {
    const s = new SpdySession(sock);
    sessions.push(s);
    s.on('stream', (st: SpdyStream) => {
      st.reply();
      st.on('data', (d: Buffer) => st.write(Buffer.from(d.toString().toUpperCase())));
      st.on('end', () => st.end());
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const client: Socket = connect((server.address() as { port: number }).port, '127.0.0.1');
  await new Promise((r) => client.once('connect', r));
  const deflate = createDeflate({ dictionary: SPDY_DICTIONARY });
  const inflate = createInflate({ dictionary: SPDY_DICTIONARY });
  let buf = Buffer.alloc(0);
  const frames: ReturnType<typeof parseFrames>['frames'] = [];
  client.on('data', (d) => {
    const p = parseFrames(Buffer.concat([buf, d]));
    buf = Buffer.from(p.rest);
    frames.push(...p.frames);
  });
  const syn = Buffer.alloc(10);
  syn.writeUInt32BE(1, 0);
  const block = await flushed(deflate, encodeHeaderBlock({ streamtype: 'data', port: '8080', requestid: '0' }));
  client.write(controlFrame(FrameType.SYN_STREAM, 0, Buffer.concat([syn, block])));
  client.write(dataFrame(1, 0, Buffer.from('hello')));
  client.write(dataFrame(1, FLAG_FIN, Buffer.alloc(0)));
  client.write(controlFrame(FrameType.PING, 0, Buffer.from([0, 0, 0, 7])));
  await waitFor(
    () => `the echoed data's FIN and the PING reply; frames so far: ${JSON.stringify(frames.map((f) => (f.control ? f.type : 'data')))}`,
    () => frames.some((f) => !f.control && f.flags & FLAG_FIN) && frames.some((f) => f.control && f.type === FrameType.PING),
    10_000,
  );
  const reply = frames.find((f) => f.control && f.type === FrameType.SYN_REPLY)!;
  assert.ok(reply);
  assert.equal(reply.data.readUInt32BE(0), 1);
  assert.deepEqual(decodeHeaderBlock(await flushed(inflate, reply.data.subarray(4))), {});
  const data = Buffer.concat(frames.filter((f) => !f.control).map((f) => f.data)).toString();
  assert.equal(data, 'HELLO');
  assert.deepEqual([...frames.find((f) => f.control && f.type === FrameType.PING)!.data], [0, 0, 0, 7]);
  client.destroy();
  deflate.close();
  inflate.close();
  for (const s of sessions) s.close();
  server.close();
});
