// Removes whatever a test's containerd still holds, through its CRI: every sandbox stopped (its
// network torn down by CNI DEL) and removed, so no container, shim or network outlives the test.

import { CriRuntimeClient } from '../../src/runtime/cri/client.js';
import { silentLogger } from '../../src/util/logger.js';

export async function removeAllSandboxes(endpoint: string): Promise<void> {
  const client = new CriRuntimeClient({ endpoint, logger: silentLogger, requestTimeoutMs: 30_000 });
  try {
    for (const s of await client.listPodSandbox()) {
      await client.stopPodSandbox(s.id).catch(() => {});
      await client.removePodSandbox(s.id).catch(() => {});
    }
  } finally {
    await client.close();
  }
}
