// The agent server's route table. Routes (a path pattern with `:name` segments and its methods) and
// handlers are tried in the order they were added; each answers the request and returns true, or
// returns false to pass it on. The kubelet routes and the Kubernetes API (kubeapi/routes.ts) are
// routes of the one table. Upgrade handlers (SPDY, WebSocket) likewise. What no handler takes gets a
// 404 Status, and a thrown error its Status. Authentication runs before any handler (see access.ts).

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { rawStatusResponse, sendError, sendStatus, statusBody, statusOf } from './status.js';

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => boolean;
export type RouteParams = Record<string, string>;
export type RouteFn = (req: IncomingMessage, res: ServerResponse, params: RouteParams, url: URL) => void | Promise<void>;

/** An authenticated user, as apiserver's user.Info carries it. */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** The local administrator: the socket's owner or the holder of the agent's token (cluster-admin). */
export const adminUser: UserInfo = { username: 'system:admin', groups: ['system:masters', 'system:authenticated'] };

/** An unauthenticated request where anonymous access is allowed. */
export const anonymousUser: UserInfo = { username: 'system:anonymous', groups: ['system:unauthenticated'] };

/** Who made a request and through which listener; set by the access filter before routing. */
export interface RequestInfo {
  listener: 'unix' | 'tcp' | 'read-only';
  /** The local administrator, an anonymous caller, or the user a credential names. */
  user: UserInfo;
}

const infos = new WeakMap<IncomingMessage, RequestInfo>();

export function setRequestInfo(req: IncomingMessage, info: RequestInfo): void {
  infos.set(req, info);
}

export function requestInfo(req: IncomingMessage): RequestInfo | undefined {
  return infos.get(req);
}

const urls = new WeakMap<IncomingMessage, URL>();

/** The request's URL (path and query), parsed against a dummy origin once per request. */
export function requestURL(req: IncomingMessage): URL {
  let url = urls.get(req);
  if (!url) urls.set(req, (url = new URL(req.url ?? '/', 'http://podvisor.invalid')));
  return url;
}

/** Compiles `/containerLogs/:namespace/:pod/:container` into a matcher of decoded segments. */
function compile(pattern: string): (path: string) => RouteParams | undefined {
  const parts = pattern.split('/');
  return (path) => {
    const segs = path.split('/');
    if (segs.length !== parts.length) return undefined;
    const params: RouteParams = {};
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      let s: string;
      try {
        s = decodeURIComponent(segs[i]!);
      } catch {
        return undefined;
      }
      if (p.startsWith(':')) {
        if (s === '') return undefined;
        params[p.slice(1)] = s;
      } else if (p !== s) return undefined;
    }
    return params;
  };
}

export class Router {
  private readonly handlers: RequestHandler[] = [];
  private readonly upgrades: UpgradeHandler[] = [];

  /** Adds a handler, tried after those added before it. */
  use(handler: RequestHandler): void {
    this.handlers.push(handler);
  }

  /** Adds an upgrade handler (Connection: Upgrade requests). */
  useUpgrade(handler: UpgradeHandler): void {
    this.upgrades.push(handler);
  }

  /**
   * A route on one path pattern (`:name` segments, decoded) for the given methods; another method on
   * the same path is a 405 Status.
   */
  route(methods: string | string[], pattern: string, fn: RouteFn): void {
    const allowed = Array.isArray(methods) ? methods : [methods];
    const match = compile(pattern);
    this.use(async (req, res) => {
      const url = requestURL(req);
      const params = match(url.pathname);
      if (!params) return false;
      if (!allowed.includes(req.method ?? 'GET')) {
        sendStatus(res, statusBody(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`));
        return true;
      }
      await fn(req, res, params, url);
      return true;
    });
  }

  /** Runs the handlers until one takes the request (true; a thrown error becomes its Status), or none does (false). */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    try {
      for (const h of this.handlers) {
        if (await h(req, res)) return true;
      }
      return false;
    } catch (err) {
      sendError(res, err);
      return true;
    }
  }

  /** Runs the handlers; a thrown error becomes its Status, nothing taken becomes 404. */
  async dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!(await this.handle(req, res))) sendStatus(res, statusBody(404, 'NotFound', 'the server could not find the requested resource'));
  }

  dispatchUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    try {
      for (const h of this.upgrades) {
        if (h(req, socket, head)) return;
      }
      socket.end(rawStatusResponse(statusBody(404, 'NotFound', 'the server could not find the requested resource')));
    } catch (err) {
      socket.end(rawStatusResponse(statusOf(err)));
    }
  }
}
