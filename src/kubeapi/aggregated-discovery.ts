// Aggregated discovery: /api and /apis answer an APIGroupDiscoveryList (apidiscovery.k8s.io v2, or
// v2beta1) when the Accept header asks for one (`application/json;g=apidiscovery.k8s.io;v=v2;
// as=APIGroupDiscoveryList`), every group/version's resources in one document, built from the same
// APIResources as the legacy documents (discovery.ts); with `Vary: Accept`, a quoted SHA-512 ETag and
// 304 for it. Any other Accept gets the legacy document.
// Upstream: apiserver's endpoints/discovery/aggregated (handler.go, etag.go, negotiation.go) and
// ConvertGroupVersionIntoToDiscovery.

import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { apiResources } from './discovery.js';
import type { ResourceIndex } from './resource-table.js';

export type AggregatedVersion = 'v2' | 'v2beta1';

interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

interface APISubresourceDiscovery {
  subresource: string;
  responseKind?: GroupVersionKind;
  verbs: string[];
}

interface APIResourceDiscovery {
  resource: string;
  responseKind: GroupVersionKind;
  scope: 'Namespaced' | 'Cluster';
  singularResource: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  subresources?: APISubresourceDiscovery[];
}

/** The aggregated media type the Accept header asks for first, if any (JSON only; a legacy type first means legacy). */
export function aggregatedDiscoveryRequested(req: IncomingMessage): AggregatedVersion | undefined {
  for (const clause of (req.headers.accept ?? '').split(',')) {
    const [type = '', ...raw] = clause.split(';').map((s) => s.trim());
    const params = Object.fromEntries(raw.map((p) => p.split('=').map((s) => s.trim())));
    const mediaType = type.toLowerCase();
    if (params.as === undefined) {
      if (mediaType === 'application/json' || mediaType === '*/*' || mediaType === 'application/*') return undefined;
      continue;
    }
    if (mediaType !== 'application/json' || params.g !== 'apidiscovery.k8s.io' || params.as !== 'APIGroupDiscoveryList') continue;
    if (params.v === 'v2' || params.v === 'v2beta1') return params.v;
  }
  return undefined;
}

/** One group/version's resources, each with its subresources (ConvertGroupVersionIntoToDiscovery). */
function resourcesOf(index: ResourceIndex, group: string, version: string): APIResourceDiscovery[] {
  const list = index
    .inGroupVersion(group, version)
    .flatMap(apiResources)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const out: APIResourceDiscovery[] = [];
  const parents = new Map<string, APIResourceDiscovery>();
  for (const r of list) {
    if (r.name.includes('/')) continue;
    const d: APIResourceDiscovery = {
      resource: r.name,
      responseKind: { group: r.group ?? '', version: r.version ?? '', kind: r.kind },
      scope: r.namespaced ? 'Namespaced' : 'Cluster',
      singularResource: r.singularName,
      verbs: r.verbs,
      ...(r.shortNames ? { shortNames: r.shortNames } : {}),
      ...(r.categories ? { categories: r.categories } : {}),
    };
    out.push(d);
    parents.set(r.name, d);
  }
  for (const r of list) {
    const slash = r.name.indexOf('/');
    if (slash < 0) continue;
    const parent = parents.get(r.name.slice(0, slash));
    if (!parent) continue;
    (parent.subresources ??= []).push({
      subresource: r.name.slice(slash + 1),
      ...(r.kind ? { responseKind: { group: r.group ?? '', version: r.version ?? '', kind: r.kind } } : {}),
      verbs: r.verbs,
    });
  }
  return out;
}

/** The APIGroupDiscoveryList of /api (the core group) or /apis (the named groups). */
export function aggregatedDiscovery(index: ResourceIndex, root: 'api' | 'apis', version: AggregatedVersion): unknown {
  const groups = index.groups.filter((g) => (root === 'api' ? g.group === '' : g.group !== ''));
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: `apidiscovery.k8s.io/${version}`,
    metadata: {},
    items: groups.map((g) => ({
      metadata: { ...(g.group ? { name: g.group } : {}), creationTimestamp: null },
      versions: g.versions.map((v) => ({ version: v, resources: resourcesOf(index, g.group, v), freshness: 'Current' })),
    })),
  };
}

/** Writes the document with upstream's headers: the negotiated media type, `Vary: Accept`, its ETag (304 when the client has it). */
export function sendAggregatedDiscovery(req: IncomingMessage, res: ServerResponse, version: AggregatedVersion, doc: unknown): void {
  const data = Buffer.from(JSON.stringify(doc));
  const etag = JSON.stringify(createHash('sha512').update(data).digest('hex').toUpperCase());
  res.setHeader('Vary', 'Accept');
  res.setHeader('ETag', etag);
  if (req.headers['if-none-match'] === etag) {
    res.writeHead(304);
    res.end();
    return;
  }
  res.writeHead(200, {
    'Content-Type': `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList`,
    'Content-Length': data.length,
  });
  res.end(data);
}
