// The API-server pod source (the kubelet's config.NewSourceApiserver): the pods bound to this node,
// listed and watched with fieldSelector=spec.nodeName=<node>, handed on as additions, updates and
// removals; mirror pods are routed apart, since they are this node's reports, not work to run.

import type { Pod } from '../api/types.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import type { ApiClient } from './client.js';
import { isMirrorPod } from './mirror.js';
import { Reflector, type ChangeType } from './reflector.js';

export interface PodHandler {
  add(pod: Pod): void;
  update(pod: Pod, old: Pod): void;
  /** The pod is gone from the API server. */
  remove(pod: Pod): void;
  mirror(type: ChangeType, pod: Pod): void;
  /** After each (re)list: the source's view is complete again. */
  listed?(): void;
}

export interface ApiPodSourceOptions {
  client: ApiClient;
  clock: Clock;
  logger: Logger;
  nodeName: string;
  handler: PodHandler;
  watchTimeoutSeconds?: number;
}

export class ApiPodSource {
  private readonly reflector: Reflector<Pod>;

  constructor(opts: ApiPodSourceOptions) {
    const h = opts.handler;
    this.reflector = new Reflector<Pod>({
      client: opts.client,
      clock: opts.clock,
      logger: opts.logger,
      path: '/api/v1/pods',
      query: { fieldSelector: `spec.nodeName=${opts.nodeName}` },
      watchTimeoutSeconds: opts.watchTimeoutSeconds,
      onListed: () => h.listed?.(),
      onChange: (type, pod, old) => {
        if (isMirrorPod(pod)) return h.mirror(type, pod);
        if (type === 'ADDED') h.add(pod);
        else if (type === 'MODIFIED') h.update(pod, old!);
        else h.remove(pod);
      },
    });
  }

  start(): void {
    this.reflector.start();
  }

  whenListed(): Promise<void> {
    return this.reflector.whenListed();
  }

  /** The pods the API server holds for this node, as last seen. */
  pods(): Pod[] {
    return this.reflector.list();
  }

  stop(): Promise<void> {
    return this.reflector.stop();
  }
}
