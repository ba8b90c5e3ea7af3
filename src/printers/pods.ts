// The pod table of `kubectl get pods` for podvisor's own output: the printer lives with the API's
// Table responses (tables.ts) so both print a pod the same way.

export { podColumns, podWideColumns, podRow, podStatusReason, formatPodTable, type PodPrintOptions } from './tables.js';
