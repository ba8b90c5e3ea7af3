// Vendors the Kubernetes OpenAPI v2 document the API's /openapi/v2 and /openapi/v3 are cut from
// (src/kubeapi/openapi.ts): upstream's api/openapi-spec/swagger.json of one release, byte for byte,
// gzip-compressed into src/kubeapi/openapi-spec/swagger.json.gz (3.2 MB of JSON, 0.2 MB stored).
//
//   node scripts/vendor-openapi-spec.mjs SWAGGER_JSON
//
// SWAGGER_JSON is kubernetes/kubernetes' api/openapi-spec/swagger.json at the release's tag (the
// same bytes as the `swagger.json.unprocessed` the Kubernetes client generators download).

import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const [source] = process.argv.slice(2);
if (!source) {
  console.error('usage: node scripts/vendor-openapi-spec.mjs SWAGGER_JSON');
  process.exit(2);
}
const bytes = readFileSync(source);
const doc = JSON.parse(bytes.toString('utf8'));
if (doc.swagger !== '2.0' || !doc.definitions || !doc.paths) {
  console.error(`${source}: not an OpenAPI v2 document`);
  process.exit(1);
}
const out = join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'kubeapi', 'openapi-spec', 'swagger.json.gz');
writeFileSync(out, gzipSync(bytes, { level: 9 }));
console.log(`${out}: ${Object.keys(doc.definitions).length} definitions, ${Object.keys(doc.paths).length} paths`);
