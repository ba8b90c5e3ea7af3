// The signals that stop a command gracefully, as SIGTERM does (kept apart so the entry point loads
// nothing else to install its handlers).

/** SIGHUP (terminal closed) and SIGQUIT are handled as SIGTERM: they must never orphan a container. */
export const shutdownSignals: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];
