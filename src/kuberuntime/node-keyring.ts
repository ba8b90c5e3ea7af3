// The node's own registry credentials, as the kubelet's credential provider reads them besides a
// pod's imagePullSecrets (pkg/credentialprovider/config.go): the docker config.json in the root dir
// (the kubelet's /var/lib/kubelet/config.json), in $DOCKER_CONFIG, and in the user's ~/.docker, read
// at each pull so that a `docker login` meanwhile counts. Each becomes a dockerconfigjson Secret for
// the same keyring lookup as the pod's secrets.

import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Secret } from '../api/types.js';

/** Where the node's docker config.json files are looked for, most preferred first. */
export function nodeDockerConfigPaths(rootDir: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const home = env.HOME || homedir();
  return [join(rootDir, 'config.json'), ...(env.DOCKER_CONFIG ? [join(env.DOCKER_CONFIG, 'config.json')] : []), join(home, '.docker', 'config.json')];
}

/** The node's docker configs as dockerconfigjson Secrets (unreadable or absent files give none). */
export function nodeDockerConfigs(paths: readonly string[]): Secret[] {
  const out: Secret[] = [];
  for (const path of paths) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      continue;
    }
    out.push({ apiVersion: 'v1', kind: 'Secret', metadata: { name: path }, type: 'kubernetes.io/dockerconfigjson', stringData: { '.dockerconfigjson': text } });
  }
  return out;
}
