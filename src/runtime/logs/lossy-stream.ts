// A service's own log stream that a full disk cannot take down: a line the file refuses (ENOSPC,
// EIO) is dropped and counted, and the count is written once a line gets through again, where a
// plain stream would raise the error and end the process.

import { writeSync } from 'node:fs';
import { Writable } from 'node:stream';

/** Writes to target (synchronously to its descriptor when it has one), dropping what fails. */
export function lossyLogStream(target: NodeJS.WritableStream): Writable {
  const fd = (target as { fd?: unknown }).fd;
  let dropped = 0;
  const put = (text: string): boolean => {
    try {
      if (typeof fd === 'number') writeSync(fd, text);
      else target.write(text);
      return true;
    } catch {
      return false;
    }
  };
  if (typeof fd !== 'number') target.on('error', () => (dropped += 1));
  return new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, done) {
      const text = chunk.toString();
      if (dropped > 0 && put(`${new Date().toISOString()} warn Log lines dropped while the log file could not be written count=${dropped}\n`)) dropped = 0;
      if (!put(text)) dropped++;
      done();
    },
  });
}
