// /openapi/v2 and /openapi/v3 as kube-apiserver serves them: the v2 document in JSON or gnostic's
// protobuf by the Accept header (406 for neither), gzip when the client takes it, a quoted ETag of
// the SHA-512 of the JSON (If-None-Match answers 304), `Vary: Accept`; the v3 root lists each
// group/version's URL with `?hash=<its ETag>`, and a group/version asked for with its current hash is
// cacheable for good (`Cache-Control: public, immutable`, a year's Expires), with a stale hash
// redirected (301) to the current URL. The documents are built from the resource table on first
// request and kept (v2's protobuf, the costliest, only once a client asks for it).
// Upstream: kube-openapi's pkg/handler (v2) and pkg/handler3 (v3).

import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { encodeOpenAPIV2 } from '../http/openapi-protobuf.js';
import { notFoundPath } from '../http/status.js';
import { openapiV3Documents, servedSwagger, type SwaggerDocument } from './openapi.js';
import type { ResourceIndex } from './resource-table.js';

const v2ProtobufDeprecated = 'com.github.proto-openapi.spec.v2@v1.0+protobuf';
const v2Protobuf = 'com.github.proto-openapi.spec.v2.v1.0+protobuf';

/** A representation: its bytes, gzipped once on first need. */
interface Body {
  data: Buffer;
  gzip?: Buffer;
}

interface V2 {
  doc: SwaggerDocument;
  json: Body;
  readonly protobuf: Body;
  etag: string;
}

interface V3 {
  root: Buffer;
  rootETag: string;
  groups: Map<string, { json: Buffer; etag: string }>;
}

/** SHA-512 of the bytes in upper-case hex (kube-openapi's computeETag). */
const computeETag = (data: Buffer): string => createHash('sha512').update(data).digest('hex').toUpperCase();

/** Accept's media ranges in the client's preference (q, then order), as goautoneg sorts them. */
function acceptClauses(header: string | undefined): Array<{ type: string; subtype: string }> {
  const clauses = (header || '*/*').split(',').map((part, i) => {
    const [range = '', ...params] = part.split(';').map((s) => s.trim());
    const q = params.find((p) => p.startsWith('q='));
    const [type = '', subtype = ''] = range.toLowerCase().split('/');
    return { type, subtype, q: q ? Number(q.slice(2)) : 1, i };
  });
  return clauses.filter((c) => c.type !== '' && c.q > 0).sort((a, b) => b.q - a.q || a.i - b.i);
}

const matches = (clause: { type: string; subtype: string }, subtype: string): boolean =>
  (clause.type === 'application' || clause.type === '*') && (clause.subtype === subtype || clause.subtype === '*');

/** Whether the request's If-None-Match names the ETag (a 304 then). */
function notModified(req: IncomingMessage, etag: string): boolean {
  const inm = req.headers['if-none-match'];
  return inm !== undefined && inm.split(',').some((t) => t.trim() === etag || t.trim() === '*');
}

const acceptsGzip = (req: IncomingMessage): boolean => /\bgzip\b/.test(req.headers['accept-encoding'] ?? '');

/** Writes a body with its ETag and Last-Modified as Go's http.ServeContent does (304 on a matching If-None-Match). */
function serveContent(req: IncomingMessage, res: ServerResponse, body: Body, etag: string, lastModified: Date, gzip: boolean): void {
  res.setHeader('Etag', etag);
  res.setHeader('Last-Modified', lastModified.toUTCString());
  if (notModified(req, etag)) {
    res.writeHead(304);
    res.end();
    return;
  }
  if (gzip) {
    res.appendHeader('Vary', 'Accept-Encoding');
    if (acceptsGzip(req)) {
      body.gzip ??= gzipSync(body.data);
      res.writeHead(200, { 'Content-Encoding': 'gzip', 'Content-Length': body.gzip.length });
      res.end(req.method === 'HEAD' ? undefined : body.gzip);
      return;
    }
  }
  res.writeHead(200, { 'Content-Length': body.data.length });
  res.end(req.method === 'HEAD' ? undefined : body.data);
}

export class OpenAPIService {
  private v2?: V2;
  private v3?: V3;
  private readonly lastModified: Date;

  constructor(
    private readonly index: ResourceIndex,
    private readonly now: () => number,
  ) {
    this.lastModified = wholeSeconds(now());
  }

  /** The v2 document (its protobuf encoded on the first request for it). */
  private builtV2(): V2 {
    if (this.v2) return this.v2;
    const doc = servedSwagger(this.index);
    const json = Buffer.from(JSON.stringify(doc));
    let protobuf: Body | undefined;
    this.v2 = {
      doc,
      json: { data: json },
      get protobuf() {
        protobuf ??= { data: encodeOpenAPIV2(doc) };
        return protobuf;
      },
      etag: JSON.stringify(computeETag(json)),
    };
    return this.v2;
  }

  private builtV3(): V3 {
    if (this.v3) return this.v3;
    const groups = new Map<string, { json: Buffer; etag: string }>();
    for (const [key, d] of openapiV3Documents(this.builtV2().doc)) {
      const bytes = Buffer.from(JSON.stringify(d));
      groups.set(key, { json: bytes, etag: computeETag(bytes) });
    }
    const paths = Object.fromEntries([...groups].map(([key, g]) => [key, { serverRelativeURL: serverRelativeURL(key, g.etag) }]));
    const root = Buffer.from(JSON.stringify({ paths }));
    this.v3 = { root, rootETag: JSON.stringify(computeETag(root)), groups };
    return this.v3;
  }

  /** GET /openapi/v2. */
  serveV2(req: IncomingMessage, res: ServerResponse): void {
    const v2 = this.builtV2();
    res.appendHeader('Vary', 'Accept');
    for (const clause of acceptClauses(req.headers.accept)) {
      if (matches(clause, 'json')) {
        res.setHeader('Content-Type', 'application/json');
        return serveContent(req, res, v2.json, v2.etag, this.lastModified, true);
      }
      if (matches(clause, v2ProtobufDeprecated) || matches(clause, v2Protobuf)) {
        res.setHeader('Content-Type', `application/${v2Protobuf}`);
        return serveContent(req, res, v2.protobuf, v2.etag, this.lastModified, true);
      }
    }
    res.writeHead(406);
    res.end();
  }

  /** GET /openapi/v3 (the root: every group/version's URL) and /openapi/v3/<group/version>. */
  serveV3(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const v3 = this.builtV3();
    const key = url.pathname.replace(/^\/openapi\/v3\/?/, '').replace(/\/$/, '');
    if (key === '') {
      res.setHeader('Content-Type', 'application/json');
      return serveContent(req, res, { data: v3.root }, v3.rootETag, wholeSeconds(this.now()), false);
    }
    const group = v3.groups.get(key);
    if (!group) throw notFoundPath();
    res.appendHeader('Vary', 'Accept');
    if (!acceptClauses(req.headers.accept).some((c) => matches(c, 'json'))) {
      res.writeHead(406);
      res.end();
      return;
    }
    res.setHeader('Content-Type', 'application/json');
    const hash = url.searchParams.get('hash');
    if (hash) {
      if (hash !== group.etag) {
        res.writeHead(301, { Location: serverRelativeURL(key, group.etag) });
        res.end();
        return;
      }
      res.setHeader('Cache-Control', 'public, immutable');
      res.setHeader('Expires', new Date(this.now() + 365 * 86_400_000).toUTCString());
    }
    serveContent(req, res, { data: group.json }, JSON.stringify(group.etag), this.lastModified, false);
  }
}

/** A time as Go's http.ServeContent writes it (whole seconds). */
const wholeSeconds = (ms: number): Date => new Date(Math.floor(ms / 1000) * 1000);

/** `/openapi/v3/apis/apps/v1?hash=…` (kube-openapi's constructServerRelativeURL). */
function serverRelativeURL(key: string, etag: string): string {
  return `/openapi/v3/${key}?hash=${etag}`;
}
