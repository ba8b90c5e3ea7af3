// Probe and lifecycle-handler validation (validateProbe, validateHandler, validateLifecycle and
// the liveness/readiness/startup specifics), with the API server's paths and messages.

import type { Lifecycle, LifecycleHandler, Probe } from '../types.js';
import { type FieldError, type FieldPath, forbidden, internalError, invalid, notSupported, required } from '../field-errors.js';
import { isHTTPHeaderName, isValidPortName, isValidPortNum } from './names.js';

export const isNegativeErrorMsg = 'must be greater than or equal to 0';

export function validateNonnegativeField(value: number | undefined, path: FieldPath): FieldError[] {
  return value !== undefined && value < 0 ? [invalid(path, value, isNegativeErrorMsg)] : [];
}

/** ValidatePortNumOrName: integers must be 1..65535, names IANA_SVC_NAMEs. */
export function validatePortNumOrName(port: unknown, path: FieldPath): FieldError[] {
  if (typeof port === 'number') return isValidPortNum(port).map((m) => invalid(path, port, m));
  if (typeof port === 'string') return isValidPortName(port).map((m) => invalid(path, port, m));
  if (port === undefined) return isValidPortNum(0).map((m) => invalid(path, 0, m));
  return [internalError(path, `unknown type: ${typeof port}`)];
}

interface CommonHandler {
  exec?: { command?: string[] };
  httpGet?: { path?: string; port?: unknown; scheme?: string; httpHeaders?: { name: string }[] };
  tcpSocket?: { port?: unknown };
  grpc?: { port?: number };
  sleep?: { seconds?: number };
}

function validateSleepAction(seconds: number, gracePeriod: number | undefined, path: FieldPath): FieldError[] {
  // Without a grace period the pod's own error already reports the real problem.
  if (gracePeriod === undefined || gracePeriod === null) return [];
  // Zero is valid since PodLifecycleSleepActionAllowZero (GA, locked on since 1.34).
  if (seconds < 0 || seconds > gracePeriod) {
    return [invalid(path, seconds, `must be non-negative and less than terminationGracePeriodSeconds (${gracePeriod})`)];
  }
  return [];
}

/** validateHandler: the first handler present is validated, every further one is forbidden. */
export function validateHandler(h: CommonHandler, gracePeriod: number | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  let count = 0;
  const more = (name: string) => forbidden(path.child(name), 'may not specify more than 1 handler type');
  if (h.exec) {
    count++;
    if (!h.exec.command?.length) errs.push(required(path.child('exec', 'command'), ''));
  }
  if (h.httpGet) {
    if (count > 0) errs.push(more('httpGet'));
    else {
      count++;
      const p = path.child('httpGet');
      if (!h.httpGet.path) errs.push(required(p.child('path'), ''));
      errs.push(...validatePortNumOrName(h.httpGet.port, p.child('port')));
      const scheme = h.httpGet.scheme ?? '';
      if (scheme !== 'HTTP' && scheme !== 'HTTPS') errs.push(notSupported(p.child('scheme'), scheme, ['HTTP', 'HTTPS']));
      for (const header of h.httpGet.httpHeaders ?? []) {
        for (const m of isHTTPHeaderName(header.name ?? '')) errs.push(invalid(p.child('httpHeaders'), header.name ?? '', m));
      }
    }
  }
  if (h.tcpSocket) {
    if (count > 0) errs.push(more('tcpSocket'));
    else {
      count++;
      errs.push(...validatePortNumOrName(h.tcpSocket.port, path.child('tcpSocket', 'port')));
    }
  }
  if (h.grpc) {
    if (count > 0) errs.push(more('grpc'));
    else {
      count++;
      // gRPC ports are int32 only: a name never gets here (decoding rejects it).
      errs.push(...validatePortNumOrName(h.grpc.port ?? 0, path.child('grpc', 'port')));
    }
  }
  if (h.sleep) {
    if (count > 0) errs.push(more('sleep'));
    else {
      count++;
      errs.push(...validateSleepAction(h.sleep.seconds ?? 0, gracePeriod, path.child('sleep')));
    }
  }
  if (count === 0) errs.push(required(path, 'must specify a handler type'));
  return errs;
}

export function validateProbe(probe: Probe, gracePeriod: number | undefined, path: FieldPath): FieldError[] {
  const { exec, httpGet, tcpSocket, grpc } = probe;
  const errs = validateHandler({ exec, httpGet, tcpSocket, grpc } as CommonHandler, gracePeriod, path);
  errs.push(...validateNonnegativeField(probe.initialDelaySeconds, path.child('initialDelaySeconds')));
  errs.push(...validateNonnegativeField(probe.timeoutSeconds, path.child('timeoutSeconds')));
  errs.push(...validateNonnegativeField(probe.periodSeconds, path.child('periodSeconds')));
  errs.push(...validateNonnegativeField(probe.successThreshold, path.child('successThreshold')));
  errs.push(...validateNonnegativeField(probe.failureThreshold, path.child('failureThreshold')));
  const tgp = probe.terminationGracePeriodSeconds;
  if (tgp !== undefined && tgp !== null && tgp <= 0) {
    errs.push(invalid(path.child('terminationGracePeriodSeconds'), tgp, 'must be greater than 0'));
  }
  return errs;
}

export function validateLivenessProbe(probe: Probe | undefined, gracePeriod: number | undefined, path: FieldPath): FieldError[] {
  if (!probe) return [];
  const errs = validateProbe(probe, gracePeriod, path);
  if ((probe.successThreshold ?? 0) !== 1) errs.push(invalid(path.child('successThreshold'), probe.successThreshold ?? 0, 'must be 1'));
  return errs;
}

export function validateReadinessProbe(probe: Probe | undefined, gracePeriod: number | undefined, path: FieldPath): FieldError[] {
  if (!probe) return [];
  const errs = validateProbe(probe, gracePeriod, path);
  if (probe.terminationGracePeriodSeconds !== undefined && probe.terminationGracePeriodSeconds !== null) {
    errs.push(invalid(path.child('terminationGracePeriodSeconds'), probe.terminationGracePeriodSeconds, 'must not be set for readinessProbes'));
  }
  return errs;
}

export function validateStartupProbe(probe: Probe | undefined, gracePeriod: number | undefined, path: FieldPath): FieldError[] {
  return validateLivenessProbe(probe, gracePeriod, path);
}

/** Linux signal names accepted for lifecycle.stopSignal. */
export const linuxStopSignals = [
  'SIGABRT',
  'SIGALRM',
  'SIGBUS',
  'SIGCHLD',
  'SIGCLD',
  'SIGCONT',
  'SIGFPE',
  'SIGHUP',
  'SIGILL',
  'SIGINT',
  'SIGIO',
  'SIGIOT',
  'SIGKILL',
  'SIGPIPE',
  'SIGPOLL',
  'SIGPROF',
  'SIGPWR',
  'SIGQUIT',
  'SIGSEGV',
  'SIGSTKFLT',
  'SIGSTOP',
  'SIGSYS',
  'SIGTERM',
  'SIGTRAP',
  'SIGTSTP',
  'SIGTTIN',
  'SIGTTOU',
  'SIGURG',
  'SIGUSR1',
  'SIGUSR2',
  'SIGVTALRM',
  'SIGWINCH',
  'SIGXCPU',
  'SIGXFSZ',
];

function handlerOf(h: LifecycleHandler): CommonHandler {
  const { exec, httpGet, tcpSocket, sleep } = h as LifecycleHandler & { sleep?: { seconds?: number } };
  return { exec, httpGet, tcpSocket, sleep } as CommonHandler;
}

export function validateLifecycle(lc: Lifecycle, gracePeriod: number | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (lc.postStart) errs.push(...validateHandler(handlerOf(lc.postStart), gracePeriod, path.child('postStart')));
  if (lc.preStop) errs.push(...validateHandler(handlerOf(lc.preStop), gracePeriod, path.child('preStop')));
  if (lc.stopSignal !== undefined && !linuxStopSignals.includes(lc.stopSignal)) {
    errs.push(notSupported(path.child('stopSignal'), lc.stopSignal, linuxStopSignals));
  }
  return errs;
}
