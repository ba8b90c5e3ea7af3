// The resource table's row for core/v1 Events: read-only storage over the node's event store, the
// field selectors of pkg/registry/core/event (ToSelectableFields) and the event Table.

import type { Event } from '../../api/types.js';
import { eventTable } from '../../printers/tables.js';
import type { KubeBackend, Storage } from '../backend.js';
import { resource } from '../resource-def.js';

function eventStorage(b: KubeBackend): Storage<Event> {
  return {
    list: () => b.listEvents(),
    get: (ns, name) => b.listEvents().items.find((e) => e.metadata?.namespace === ns && e.metadata?.name === name),
    watch: (rv, on) => b.watchEvents(rv, on),
  };
}

export const events = resource<Event>({
  group: '',
  version: 'v1',
  kind: 'Event',
  resource: 'events',
  singular: 'event',
  shortNames: ['ev'],
  namespaced: true,
  verbs: ['get', 'list', 'watch'],
  storage: eventStorage,
  fieldSelectors: {
    'involvedObject.kind': (e) => e.involvedObject?.kind ?? '',
    'involvedObject.namespace': (e) => e.involvedObject?.namespace ?? '',
    'involvedObject.name': (e) => e.involvedObject?.name ?? '',
    'involvedObject.uid': (e) => e.involvedObject?.uid ?? '',
    'involvedObject.apiVersion': (e) => e.involvedObject?.apiVersion ?? '',
    'involvedObject.resourceVersion': (e) => e.involvedObject?.resourceVersion ?? '',
    'involvedObject.fieldPath': (e) => e.involvedObject?.fieldPath ?? '',
    reason: (e) => e.reason ?? '',
    reportingComponent: (e) => e.reportingComponent ?? '',
    source: (e) => e.source?.component ?? '',
    type: (e) => e.type ?? '',
  },
  table: eventTable,
});
