// The channel protocols' framing (v1–v5.channel.k8s.io over WebSocket): every binary message starts
// with its channel, 0 stdin, 1 stdout, 2 stderr, 3 status, 4 resize; v5 adds 255 <channel> to close
// a channel. The server's handlers and the exec client both speak it.

export const CH_STDIN = 0;
export const CH_STDOUT = 1;
export const CH_STDERR = 2;
export const CH_ERROR = 3;
export const CH_RESIZE = 4;
export const CH_CLOSE = 255;

/** One message: the channel's byte, then the data. */
export const framed = (ch: number, data: Buffer | string): Buffer => Buffer.concat([Buffer.from([ch]), Buffer.isBuffer(data) ? data : Buffer.from(data)]);
