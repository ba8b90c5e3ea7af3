// The default profile's filter plugins in upstream's order (pkg/scheduler/apis/config/v1/default_plugins.go):
// NodeUnschedulable, TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit, VolumeRestrictions,
// VolumeBinding, PodTopologySpread, InterPodAffinity (the volume plugins where the agent keeps claims). The first that refuses the pod is its reason on this one node.

import type { FilterPlugin } from '../framework.js';
import { interPodAffinity, type NamespaceLabels } from './interpodaffinity.js';
import { nodeAffinity } from './nodeaffinity.js';
import { nodePorts } from './nodeports.js';
import { nodeResourcesFit } from './noderesources-fit.js';
import { nodeUnschedulable } from './nodeunschedulable.js';
import { podTopologySpread } from './podtopologyspread.js';
import { taintToleration } from './tainttoleration.js';
import { volumeBinding, type VolumeListers } from './volumebinding.js';
import { volumeRestrictions } from './volumerestrictions.js';

export interface DefaultFilterOptions {
  /** 'host' when the runtime's pods share the host's network (every containerPort is a host port). */
  network: 'host' | 'pod';
  namespaceLabels: NamespaceLabels;
  /** The claims, volumes and classes, where the agent keeps them (VolumeRestrictions and VolumeBinding run then). */
  volumes?: VolumeListers;
}

export function defaultFilters(opts: DefaultFilterOptions): FilterPlugin[] {
  return [
    nodeUnschedulable,
    taintToleration,
    nodeAffinity,
    nodePorts(opts.network),
    nodeResourcesFit,
    ...(opts.volumes ? [volumeRestrictions((ns, n) => opts.volumes!.claim(ns, n)), volumeBinding(opts.volumes)] : []),
    podTopologySpread,
    interPodAffinity(opts.namespaceLabels),
  ];
}
