// gRPC status codes by the names Go's codes.Code String() gives them, as the kubelet's messages
// spell them (`rpc error: code = NotFound desc = …`).

const names = [
  'OK',
  'Canceled',
  'Unknown',
  'InvalidArgument',
  'DeadlineExceeded',
  'NotFound',
  'AlreadyExists',
  'PermissionDenied',
  'ResourceExhausted',
  'FailedPrecondition',
  'Aborted',
  'OutOfRange',
  'Unimplemented',
  'Internal',
  'Unavailable',
  'DataLoss',
  'Unauthenticated',
];

/** The code's name, or `Code(n)` for one gRPC does not define. */
export function grpcCodeName(code: number): string {
  return names[code] ?? `Code(${code})`;
}
