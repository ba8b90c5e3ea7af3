// The API floor: a bare node:http server answering with JSON.stringify of the objects it was given
// (a list, one object per watch event) and with a log file read raw, nothing else — what serving
// the same bytes costs Node itself, measured in its own process.

import { readFile } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import { serve } from '../lib/child-server.js';
import { MeasureWindow } from '../lib/window.js';

export interface JsonFloorParams {
  /** Served as JSON.stringify(list) on GET /list. */
  list: { items: unknown[] } & Record<string, unknown>;
  /** Served on GET /log: the file's lines with the CRI prefix (time, stream, tag) cut off. */
  logFile?: string;
  /** Listen here (unix socket) instead of 127.0.0.1 on a free port. */
  socketPath?: string;
}

export interface JsonFloorStart {
  port?: number;
}

/** The content of each CRI log line, as /containerLogs returns it without timestamps. */
function criContent(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    let nl = text.indexOf('\n', i);
    if (nl < 0) nl = text.length;
    const s1 = text.indexOf(' ', i);
    const s2 = s1 < 0 ? -1 : text.indexOf(' ', s1 + 1);
    const s3 = s2 < 0 ? -1 : text.indexOf(' ', s2 + 1);
    if (s3 >= 0 && s3 < nl) out += text.slice(s3 + 1, nl) + (text[s2 + 1] === 'F' ? '\n' : '');
    i = nl + 1;
  }
  return out;
}

async function main(): Promise<void> {
  const window = new MeasureWindow();
  let params: JsonFloorParams | undefined;
  const watchers = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    window.count('requests');
    const p = params!;
    if (req.url === '/list') {
      const body = JSON.stringify(p.list);
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    } else if (req.url === '/log' && p.logFile) {
      readFile(p.logFile, 'utf8').then(
        (text) => {
          const body = criContent(text);
          res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(body) });
          res.end(body);
        },
        () => {
          res.writeHead(500);
          res.end();
        },
      );
    } else if (req.url === '/watch') {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
      res.flushHeaders();
      watchers.add(res);
      res.on('close', () => watchers.delete(res));
    } else {
      res.writeHead(404);
      res.end();
    }
  });

  async function start(p: JsonFloorParams): Promise<JsonFloorStart> {
    params = p;
    await new Promise<void>((resolve) => (p.socketPath ? server.listen(p.socketPath, resolve) : server.listen(0, '127.0.0.1', resolve)));
    const addr = server.address();
    return typeof addr === 'object' && addr ? { port: addr.port } : {};
  }

  /** Writes count MODIFIED events, one object each (cycling through the list), to every watcher. */
  function emit({ count }: { count: number }): null {
    const items = params!.list.items;
    for (let i = 0; i < count; i++) {
      const line = JSON.stringify({ type: 'MODIFIED', object: items[i % items.length] }) + '\n';
      for (const w of watchers) w.write(line);
    }
    return null;
  }

  const close = async () => {
    for (const w of watchers) w.end();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  };
  serve(
    {
      start,
      emit,
      begin: () => window.begin(),
      read: () => window.read(),
      stop: async () => {
        const r = window.read();
        await close();
        return r;
      },
    },
    close,
  );
}

await main();
