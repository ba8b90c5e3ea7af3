// A controller's pod creation that the API refuses (422 Invalid, 403 Forbidden): the failure logged
// once per message and the object's key retried after 1 s, doubled up to 5 min (client-go's
// ItemExponentialFailureRateLimiter), instead of the work queue's steady retry.

import type { Logger } from '../util/logger.js';
import type { WorkQueue } from './work-queue.js';

const baseMs = 1000;
const maxMs = 300_000;

/** Whether an API error is a refusal that retrying at once will not change. */
export function isRefusal(err: unknown): boolean {
  const code = (err as { code?: number }).code;
  return code === 422 || code === 403 || code === 400;
}

export class RefusalBackoff {
  private readonly failures = new Map<string, { count: number; message: string }>();

  constructor(
    private readonly queue: WorkQueue,
    private readonly logger: Logger,
    private readonly controller: string,
  ) {}

  /** Also for errors other than refusals (a conflict, the node's storage full): the same rate-limited retry. */
  refused(key: string, pod: string, err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    const had = this.failures.get(key);
    const count = (had?.count ?? 0) + 1;
    if (had?.message !== message) this.logger.warn('FailedCreate: the API refused a pod', { controller: this.controller, key, pod, err: message });
    this.failures.set(key, { count, message });
    this.queue.addAfter(key, Math.min(maxMs, baseMs * 2 ** (count - 1)));
  }

  succeeded(key: string): void {
    this.failures.delete(key);
  }
}
