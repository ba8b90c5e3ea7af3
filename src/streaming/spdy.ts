// SPDY/3.1 sessions for the API's streaming handlers: the framer lives with the low-level utilities,
// where the runtime's own streaming server and client use it too.

export * from '../util/spdy.js';
