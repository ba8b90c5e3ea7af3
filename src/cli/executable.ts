// The script that starts podvisor, for the processes it starts of itself (the agent, the runtime
// service): the launcher when this code runs from the bundle (whose build defines
// PODVISOR_LAUNCHER), else main.js beside this module.

import { builtin } from '../util/builtins.js';

declare const PODVISOR_LAUNCHER: string | undefined;

export function podvisorExecutable(): string {
  return typeof PODVISOR_LAUNCHER === 'string' ? PODVISOR_LAUNCHER : builtin('node:url').fileURLToPath(new URL('./main.js', import.meta.url));
}
