// Termination messages of host processes: the file named in PODVISOR_TERMINATION_MESSAGE_PATH (File,
// 4096 bytes at most), the log's tail for FallbackToLogsOnError on a failure (80 lines / 2048 bytes),
// one file per container instance, and a symlink planted in its place refused.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sh, makePod, newHarness, withPods, waitFor, containerStatus, describe, type Harness } from './harness.js';

const terminated = (h: Harness, pod: ReturnType<typeof makePod>, name: string) => () => containerStatus(h, pod, name)?.state?.terminated;

test('File: the message the process wrote to $PODVISOR_TERMINATION_MESSAGE_PATH, cut at 4096 bytes', async () => {
  const h = await newHarness();
  const pod = makePod(
    'msg-file',
    [
      sh('short', 'printf "bye from %s" "$HOSTNAME" > "$PODVISOR_TERMINATION_MESSAGE_PATH"; exit 0'),
      sh('long', 'head -c 5000 /dev/zero | tr "\\0" x > "$PODVISOR_TERMINATION_MESSAGE_PATH"; exit 4'),
      sh('quiet', 'echo logged; exit 0'),
    ],
    { restartPolicy: 'Never' },
  );
  await withPods(h, [pod], async () => {
    const short = await waitFor(() => `short terminated: ${describe(h, pod)}`, terminated(h, pod, 'short'));
    const long = await waitFor(() => `long terminated: ${describe(h, pod)}`, terminated(h, pod, 'long'));
    const quiet = await waitFor(() => `quiet terminated: ${describe(h, pod)}`, terminated(h, pod, 'quiet'));
    assert.equal(short.message, 'bye from msg-file');
    assert.equal(short.exitCode, 0);
    assert.equal(long.exitCode, 4);
    assert.equal(long.message, 'x'.repeat(4096));
    // File policy never falls back to the log.
    assert.equal(quiet.message, undefined);
  });
});

test('FallbackToLogsOnError: the log tail (80 lines, 2048 bytes) on a failure, the file first, nothing on success', async () => {
  const h = await newHarness();
  const fallback = { terminationMessagePolicy: 'FallbackToLogsOnError' };
  const pod = makePod(
    'msg-fallback',
    [
      sh('lines', 'i=0; while [ $i -lt 100 ]; do i=$((i+1)); echo "line $i"; done; exit 2', fallback),
      sh('bytes', 'head -c 3000 /dev/zero | tr "\\0" y; echo; exit 3', fallback),
      sh('file-wins', 'echo from-log; echo from-file > "$PODVISOR_TERMINATION_MESSAGE_PATH"; exit 1', fallback),
      sh('succeeds', 'echo fine; exit 0', fallback),
      sh('unterminated', 'echo first; printf DONE; exit 4', fallback),
    ],
    { restartPolicy: 'Never' },
  );
  await withPods(h, [pod], async () => {
    const lines = await waitFor(() => `lines terminated: ${describe(h, pod)}`, terminated(h, pod, 'lines'));
    const expected = Array.from({ length: 80 }, (_, i) => `line ${i + 21}\n`).join('');
    assert.equal(lines.message, expected);
    const bytes = await waitFor(() => `bytes terminated: ${describe(h, pod)}`, terminated(h, pod, 'bytes'));
    assert.equal(Buffer.byteLength(bytes.message ?? ''), 2048);
    assert.match(bytes.message ?? '', /^y+\n$/);
    const fileWins = await waitFor(() => `file-wins terminated: ${describe(h, pod)}`, terminated(h, pod, 'file-wins'));
    assert.equal(fileWins.message, 'from-file\n');
    const ok = await waitFor(() => `succeeds terminated: ${describe(h, pod)}`, terminated(h, pod, 'succeeds'));
    assert.equal(ok.message, undefined);
    // A last line without a newline is given as written (upstream's "from log output if
    // TerminationMessagePolicy FallbackToLogsOnError is set" expects exactly "DONE").
    const unterminated = await waitFor(() => `unterminated terminated: ${describe(h, pod)}`, terminated(h, pod, 'unterminated'));
    assert.equal(unterminated.message, 'first\nDONE');
  });
});

test('each restart has its own file; a symlink in its place is refused, not followed', async () => {
  const h = await newHarness();
  // Attempt 0 writes a message and fails; attempt 1 replaces its file by a symlink and succeeds.
  const script = [
    'n=$(ls "$(dirname "$PODVISOR_TERMINATION_MESSAGE_PATH")" | wc -l)',
    'if [ "$n" -eq 1 ]; then echo "first at $PODVISOR_TERMINATION_MESSAGE_PATH" > "$PODVISOR_TERMINATION_MESSAGE_PATH"; exit 1; fi',
    'ln -sf /etc/hostname "$PODVISOR_TERMINATION_MESSAGE_PATH.tmp" && mv -f "$PODVISOR_TERMINATION_MESSAGE_PATH.tmp" "$PODVISOR_TERMINATION_MESSAGE_PATH"',
    'exit 0',
  ].join('\n');
  const pod = makePod('msg-restart', [sh('c', script)], { restartPolicy: 'OnFailure' });
  await withPods(h, [pod], async () => {
    const st = await waitFor(
      () => describe(h, pod),
      () => {
        const cs = containerStatus(h, pod, 'c');
        return cs && cs.restartCount >= 1 && cs.lastState?.terminated && cs.state?.terminated ? cs : undefined;
      },
      60_000,
    );
    const first = st.lastState!.terminated!.message ?? '';
    assert.match(first, /^first at .*\/sandboxes\/[^/]+\/containers\/c\/0\n$/);
    assert.ok(first.startsWith(`first at ${h.dir}`), first);
    const second = st.state!.terminated!.message ?? '';
    assert.match(second, /^Error on reading termination log .*refusing to follow the symlink/);
  });
});
