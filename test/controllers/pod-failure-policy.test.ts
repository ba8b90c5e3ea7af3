// A Job's podFailurePolicy on failed pods: onExitCodes (In / NotIn, the container name, init
// containers, exit code 0 never matching) and onPodConditions, the first matching rule deciding,
// Count when none does, and FailJob's message in the Job controller's words.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Job, Pod } from '../../src/api/types.js';
import { matchPodFailurePolicy } from '../../src/controllers/pod-failure-policy.js';

type Policy = NonNullable<Job['spec']>['podFailurePolicy'];

function failedPod(codes: Record<string, number>, opts: { init?: Record<string, number>; conditions?: Array<{ type: string; status: string }> } = {}): Pod {
  const statuses = (m: Record<string, number>) => Object.entries(m).map(([name, exitCode]) => ({ name, state: { terminated: { exitCode } } }));
  return {
    metadata: { name: 'job-abcde', namespace: 'default' },
    spec: { containers: [] },
    status: { phase: 'Failed', containerStatuses: statuses(codes), initContainerStatuses: statuses(opts.init ?? {}), conditions: opts.conditions ?? [] },
  } as unknown as Pod;
}

const policy: Policy = {
  rules: [
    { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
    { action: 'FailJob', onExitCodes: { containerName: 'main', operator: 'In', values: [42] } },
    { action: 'Ignore', onExitCodes: { operator: 'In', values: [3, 4] } },
    { action: 'Count', onExitCodes: { operator: 'NotIn', values: [1] } },
  ],
};

test('the first matching rule decides; no match counts', () => {
  assert.deepEqual(matchPodFailurePolicy(policy, failedPod({ main: 42 })), {
    action: 'FailJob',
    message: 'Container main for pod default/job-abcde failed with exit code 42 matching FailJob rule at index 1',
  });
  // 42 from another container than the one named: not the FailJob rule; NotIn [1] counts it.
  assert.deepEqual(matchPodFailurePolicy(policy, failedPod({ side: 42 })), { action: 'Count' });
  assert.deepEqual(matchPodFailurePolicy(policy, failedPod({ main: 3 })), { action: 'Ignore' });
  assert.deepEqual(matchPodFailurePolicy(policy, failedPod({ main: 0, side: 4 })), { action: 'Ignore' });
  assert.deepEqual(matchPodFailurePolicy(policy, failedPod({ main: 1 })), { action: 'Count' });
  // An init container's exit code matches as an app container's does.
  assert.deepEqual(matchPodFailurePolicy(policy, failedPod({}, { init: { setup: 3 } })), { action: 'Ignore' });
  // The condition rule comes first.
  assert.deepEqual(matchPodFailurePolicy(policy, failedPod({ main: 42 }, { conditions: [{ type: 'DisruptionTarget', status: 'True' }] })), {
    action: 'Ignore',
  });
  assert.deepEqual(matchPodFailurePolicy(undefined, failedPod({ main: 42 })), { action: 'Count' });
});

test('exit code 0 never matches, even NotIn', () => {
  const notIn: Policy = { rules: [{ action: 'FailJob', onExitCodes: { operator: 'NotIn', values: [5] } }] };
  assert.deepEqual(matchPodFailurePolicy(notIn, failedPod({ main: 0 })), { action: 'Count' });
  assert.equal(matchPodFailurePolicy(notIn, failedPod({ main: 0, side: 7 })).action, 'FailJob');
});

test('onPodConditions: a FailJob rule names the condition', () => {
  const byCondition: Policy = { rules: [{ action: 'FailJob', onPodConditions: [{ type: 'ConfigIssue', status: 'True' }] }] };
  assert.deepEqual(matchPodFailurePolicy(byCondition, failedPod({ main: 1 }, { conditions: [{ type: 'ConfigIssue', status: 'True' }] })), {
    action: 'FailJob',
    message: 'Pod default/job-abcde has condition ConfigIssue matching FailJob rule at index 0',
  });
  assert.deepEqual(matchPodFailurePolicy(byCondition, failedPod({ main: 1 }, { conditions: [{ type: 'ConfigIssue', status: 'False' }] })), { action: 'Count' });
});
