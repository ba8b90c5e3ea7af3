// --root-dir for the commands that only talk to an agent (logs, down, agent status): resolved as the
// agent resolves it, without loading the agent.

import { resolve } from 'node:path';
import { defaultRootDir } from '../runtime/root-dir.js';
import type { CommandIO, FlagSpec, ParsedArgs } from './args.js';

export const rootDirFlag: FlagSpec = {
  name: 'root-dir',
  type: 'string',
  valueName: 'DIR',
  usage: 'Root dir of the agent (default /var/lib/podvisor as root, else $XDG_STATE_HOME/podvisor).',
};

export function rootDirOf(parsed: ParsedArgs, io: Pick<CommandIO, 'env' | 'cwd'>): string {
  const f = parsed.flags['root-dir'];
  return f ? resolve(io.cwd, String(f)) : defaultRootDir(io.env);
}
