// The controllers' slow start (pkg/controller/controller_utils.go slowStartBatch, with
// SlowStartInitialBatchSize 1): the ReplicaSet's and the Job's pod creations go in batches of 1, 2,
// 4… so that a controller whose creations are refused learns it from one call, not from hundreds.

/**
 * slowStartBatch: calls fn count times in batches of 1, 2, 4… at once, each batch once the last has
 * succeeded, and stops at the first batch with a failure; resolves to the number of successful calls.
 * A controller that cannot create pods (a quota, a refusal) learns it from one call, not from count.
 */
export async function slowStartBatch(count: number, fn: () => Promise<void>): Promise<number> {
  return (await slowStartBatchErr(count, fn)).done;
}

/** slowStartBatch with the first error of the batch that failed. */
export async function slowStartBatchErr(count: number, fn: () => Promise<void>): Promise<{ done: number; err?: unknown }> {
  let done = 0;
  for (let batch = Math.min(1, count); done < count; batch = Math.min(2 * batch, count - done)) {
    const results = await Promise.allSettled(Array.from({ length: batch }, () => fn()));
    const ok = results.filter((r) => r.status === 'fulfilled').length;
    done += ok;
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) return { done, err: failed.reason };
  }
  return { done };
}
