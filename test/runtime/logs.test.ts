// CRI-format container logs: cutting streams into F/P records, the file format written for a real
// container, rotation by size and count, and reading logs back (tail, since, rotated files).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CriLineSplitter, decodeRecord, type LogTag } from '../../src/runtime/logs/cri-format.js';
import { readContainerLog, readContainerLogEntries, readContainerLogText } from '../../src/runtime/logs/reader.js';
import { listRotatedLogs } from '../../src/runtime/logs/rotation.js';
import { formatRFC3339Nano, LogTimestamps, parseRFC3339Nano, rotationSuffix } from '../../src/runtime/logs/timestamp.js';
import { ProcessRuntime } from '../../src/runtime/process/runtime.js';
import { FakeClock, RealClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { containerConfig, sandboxConfig, tempDir, waitFor } from './helpers.js';

test('splitter: records as containerd cuts them', async (t) => {
  const cases: Array<{ name: string; chunks: string[]; max?: number; want: string[] }> = [
    { name: 'lines', chunks: ['a\nb\n'], want: ['F:a', 'F:b'] },
    { name: 'CRLF', chunks: ['a\r\nb\r\n'], want: ['F:a', 'F:b'] },
    { name: 'CRLF across chunks', chunks: ['a\r', '\nb\n'], want: ['F:a', 'F:b'] },
    { name: 'a line across chunks', chunks: ['ab', 'c', 'd\n'], want: ['F:abcd'] },
    { name: 'empty line', chunks: ['\n\n'], want: ['F:', 'F:'] },
    { name: 'no newline at EOF: a P, as containerd writes it', chunks: ['a\nrest'], want: ['F:a', 'P:rest'] },
    { name: 'exactly the max', chunks: ['abcd\n'], max: 4, want: ['F:abcd'] },
    { name: 'one over the max', chunks: ['abcde\n'], max: 4, want: ['P:abcd', 'F:e'] },
    { name: 'twice the max', chunks: ['abcdefgh\n'], max: 4, want: ['P:abcd', 'F:efgh'] },
    { name: 'long line in pieces', chunks: ['abc', 'defghij', '\n'], max: 4, want: ['P:abcd', 'P:efgh', 'F:ij'] },
    { name: 'long line at EOF', chunks: ['abcdef'], max: 4, want: ['P:abcd', 'P:ef'] },
  ];
  for (const c of cases) {
    await t.test(c.name, () => {
      const got: string[] = [];
      const s = new CriLineSplitter((tag: LogTag, content) => got.push(`${tag}:${content.toString()}`), c.max);
      for (const chunk of c.chunks) s.write(Buffer.from(chunk));
      s.end();
      assert.deepEqual(got, c.want);
    });
  }
});

test('timestamps: nine fractional digits, UTC; parsing accepts RFC 3339 variants', () => {
  const ns = BigInt(Date.UTC(2026, 11, 2, 12, 0, 0)) * 1_000_000n + 123_456_789n;
  assert.equal(formatRFC3339Nano(ns), '2026-12-02T12:00:00.123456789Z');
  assert.equal(formatRFC3339Nano(BigInt(Date.UTC(2026, 11, 2, 12, 0, 0)) * 1_000_000n), '2026-12-02T12:00:00.000000000Z');
  assert.equal(parseRFC3339Nano('2026-12-02T12:00:00.123456789Z'), ns);
  assert.equal(parseRFC3339Nano('2026-12-02T13:00:00.123456789+01:00'), ns);
  assert.equal(parseRFC3339Nano('2026-12-02T12:00:00Z'), ns - 123_456_789n);
  assert.equal(parseRFC3339Nano('yesterday'), undefined);
  assert.equal(rotationSuffix(Date.UTC(2026, 11, 2, 12, 0, 0)), '20261202-120000');
  const clock = new FakeClock();
  const ts = new LogTimestamps(clock);
  const a = ts.nowNs();
  const b = ts.nowNs();
  assert.ok(b > a);
  assert.equal(a / 1_000_000n, BigInt(clock.now()));
});

async function runContainer(script: string, opts: { logMaxSizeBytes?: number; logMaxFiles?: number } = {}) {
  const { dir, cleanup } = tempDir('podvisor-logs-');
  const rt = new ProcessRuntime({ rootDir: dir, clock: new RealClock(), logger: silentLogger, ...opts });
  try {
    const sbc = sandboxConfig(dir);
    const sb = await rt.runPodSandbox(sbc);
    const id = await rt.createContainer(sb, containerConfig(['sh', '-c', script]), sbc);
    await rt.startContainer(id);
    const status = await waitFor('container exit', async () => {
      const s = await rt.containerStatus(id);
      return s.state === 'CONTAINER_EXITED' ? s : undefined;
    });
    return { status, dir, cleanup };
  } catch (err) {
    cleanup();
    throw err;
  } finally {
    await rt.close();
  }
}

const recordLine = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{9}Z (stdout|stderr) (F|P) /;

test('log file: every line in CRI format, laid out as /var/log/pods', async () => {
  const { status, dir, cleanup } = await runContainer("echo hello; echo oops >&2; echo; printf 'no newline'");
  try {
    assert.equal(status.logPath, join(dir, 'pods', 'default_web_uid-web', 'app', '0.log'));
    const lines = readFileSync(status.logPath, 'utf8').split('\n');
    assert.equal(lines.pop(), '');
    for (const l of lines) assert.match(l, recordLine);
    const records = lines.map((l) => l.split(' ').slice(1).join(' '));
    assert.deepEqual(records.sort(), ['stderr F oops', 'stdout F ', 'stdout F hello', 'stdout P no newline'].sort());
    // Read back as the kubelet's ReadLogs writes it: the unterminated last line keeps no newline.
    const text = await readContainerLogText(status.logPath, { stream: 'stdout' });
    assert.equal(text, 'hello\n\nno newline');
  } finally {
    cleanup();
  }
});

test('log file: a line over 16 KiB is written as P pieces and an F', async () => {
  const { status, cleanup } = await runContainer("head -c 40000 /dev/zero | tr '\\0' x; echo; echo after");
  try {
    const raw = readFileSync(status.logPath);
    const recs = raw
      .toString('latin1')
      .split('\n')
      .filter((l) => l)
      .map((l) => decodeRecord(Buffer.from(l, 'latin1'))!);
    assert.deepEqual(
      recs.map((r) => [r.tag, r.content.length]),
      [
        ['P', 16384],
        ['P', 16384],
        ['F', 7232],
        ['F', 5],
      ],
    );
    const lines = await readContainerLog(status.logPath);
    assert.equal(lines.length, 2);
    assert.equal(lines[0], 'x'.repeat(40000));
    assert.equal(lines[1], 'after');
  } finally {
    cleanup();
  }
});

test('rotation: by size, keeping maxFiles files, newest content intact', async () => {
  const maxSize = 2000;
  const { status, cleanup } = await runContainer('i=0; while [ $i -lt 400 ]; do echo "line-$i"; i=$((i+1)); done', {
    logMaxSizeBytes: maxSize,
    logMaxFiles: 3,
  });
  try {
    const logDir = join(status.logPath, '..');
    const names = readdirSync(logDir).sort();
    assert.equal(names.length, 3, `files: ${names.join(' ')}`);
    assert.ok(names.includes('0.log'));
    const rotated = await listRotatedLogs(status.logPath);
    assert.equal(rotated.length, 2);
    for (const r of rotated) {
      assert.match(r, /\/0\.log\.\d{8}-\d{6}(\.\d+)?$/);
      assert.ok(statSync(r).size >= maxSize);
    }
    // What is kept is the newest output, without gaps, ending with the last line.
    const lines = await readContainerLog(status.logPath);
    const nums = lines.map((l) => Number(l.replace('line-', '')));
    assert.equal(nums[nums.length - 1], 399);
    nums.forEach((n, i) => assert.equal(n, nums[0]! + i));
    assert.ok(nums[0]! > 0, 'older output was removed');
  } finally {
    cleanup();
  }
});

test('reader: tail, since, timestamps, stream, across rotated files in order', async (t) => {
  const { dir, cleanup } = tempDir('podvisor-reader-');
  try {
    const logDir = join(dir, 'c');
    mkdirSync(logDir);
    const path = join(logDir, '0.log');
    const rec = (sec: number, stream: string, tag: string, text: string) =>
      `2026-12-02T12:00:${String(sec).padStart(2, '0')}.000000001Z ${stream} ${tag} ${text}\n`;
    // Rotated names sort by stamp, then by sequence number (numerically).
    writeFileSync(`${path}.20261202-120000`, rec(0, 'stdout', 'F', 'one') + rec(1, 'stdout', 'P', 'tw'));
    writeFileSync(`${path}.20261202-120000.2`, rec(2, 'stderr', 'F', 'err') + rec(3, 'stdout', 'F', 'o'));
    writeFileSync(`${path}.20261202-120000.10`, rec(4, 'stdout', 'F', 'three'));
    writeFileSync(path, rec(5, 'stdout', 'F', 'four') + 'garbage line\n' + rec(6, 'stderr', 'F', 'five'));
    writeFileSync(join(logDir, '1.log'), rec(7, 'stdout', 'F', 'other attempt'));

    const cases: Array<{ name: string; opts: Parameters<typeof readContainerLog>[1]; want: string[] }> = [
      { name: 'all', opts: {}, want: ['one', 'err', 'two', 'three', 'four', 'five'] },
      { name: 'tail', opts: { tailLines: 2 }, want: ['four', 'five'] },
      { name: 'tail 0', opts: { tailLines: 0 }, want: [] },
      { name: 'since', opts: { sinceTime: '2026-12-02T12:00:04Z' }, want: ['three', 'four', 'five'] },
      { name: 'since as Date', opts: { sinceTime: new Date(Date.UTC(2026, 11, 2, 12, 0, 5)) }, want: ['four', 'five'] },
      { name: 'stream', opts: { stream: 'stderr' }, want: ['err', 'five'] },
      {
        name: 'timestamps',
        opts: { tailLines: 1, timestamps: true },
        want: ['2026-12-02T12:00:06.000000001Z five'],
      },
    ];
    for (const c of cases) {
      await t.test(c.name, async () => assert.deepEqual(await readContainerLog(path, c.opts), c.want));
    }
    await t.test('a joined line keeps the timestamp of its first piece', async () => {
      const entries = await readContainerLogEntries(path);
      assert.deepEqual(entries[2], { timestamp: '2026-12-02T12:00:01.000000001Z', stream: 'stdout', content: 'two', terminated: true });
    });
    await t.test('a missing log is an error', async () => {
      await assert.rejects(readContainerLog(join(logDir, 'nope.log')), { code: 'ENOENT' });
    });
  } finally {
    cleanup();
  }
});
