// manifest-parse: reading a manifest source of N MB (a v1 List of pods built from examples/web.yaml)
// as JSON and as YAML, through parseSource and through the whole loader (decode, defaults,
// validation), each next to JSON.parse of the same bytes measured in the same run: the floor.

import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { parseSource } from '../../src/config/documents.js';
import { loadManifests } from '../../src/config/load.js';
import { figure, type ScenarioResult } from '../report/figures.js';
import type { Scenario } from './types.js';

const webYaml = fileURLToPath(new URL('../../../examples/web.yaml', import.meta.url));

function podList(bytes: number): { json: string; yaml: string; pods: number } {
  const pod = parse(readFileSync(webYaml, 'utf8')) as { metadata: { name: string } };
  const items: unknown[] = [];
  let size = 0;
  while (size < bytes) {
    const p = structuredClone(pod);
    p.metadata.name = `web-${items.length}`;
    items.push(p);
    size += JSON.stringify(p, null, 2).length + 4;
  }
  const list = { apiVersion: 'v1', kind: 'List', items };
  return { json: JSON.stringify(list, null, 2), yaml: stringify(list), pods: items.length };
}

/** Median wall time of fn over runs, ms. */
function median(runs: number, fn: () => void): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    fn();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

async function medianAsync(runs: number, fn: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

export const manifestParse: Scenario = {
  name: 'manifest-parse',
  defaultSizes: [1, 10],
  sizeIsPods: false,
  async run(sizeMb, ctx): Promise<ScenarioResult> {
    const { json, yaml, pods } = podList(sizeMb * 1024 * 1024);
    const dir = await mkdtemp(join(tmpdir(), 'podvisor-bench-parse-'));
    ctx.defer(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, 'pods.json'), json);
    await writeFile(join(dir, 'pods.yaml'), yaml);
    const runs = sizeMb >= 10 ? 3 : 5;
    ctx.log(`manifest-parse ${sizeMb} MB: ${pods} pods, JSON ${json.length} B, YAML ${yaml.length} B, ${runs} runs each`);
    const jsonFloor = median(runs, () => JSON.parse(json));
    const jsonParse = median(runs, () => parseSource({ name: 'pods.json', path: join(dir, 'pods.json'), text: json }));
    const yamlParse = median(runs, () => parseSource({ name: 'pods.yaml', path: join(dir, 'pods.yaml'), text: yaml }));
    const load = (file: string) => () => loadManifests([file], { cwd: dir, nodeName: 'bench-node' });
    const jsonLoad = await medianAsync(runs, load('pods.json'));
    const yamlLoad = await medianAsync(runs, load('pods.yaml'));
    return {
      scenario: 'manifest-parse',
      size: sizeMb,
      figures: [
        figure('json_parse_ms', 'JSON source parsed', 'ms', jsonParse, jsonFloor, { text: '≤ 3× floor', on: 'ratio', op: '<=', value: 3 }),
        figure('yaml_parse_ms', 'YAML source parsed', 'ms', yamlParse, jsonFloor),
        figure('json_load_ms', 'JSON loaded and validated', 'ms', jsonLoad, jsonFloor),
        figure('yaml_load_ms', 'YAML loaded and validated', 'ms', yamlLoad, jsonFloor),
      ],
      notes: [`size in MB; ${pods} pods; floor: JSON.parse of the same list in this process`],
      raw: { pods, jsonBytes: json.length, yamlBytes: yaml.length },
    };
  },
};
