/**
 * A failure the person running the stack can fix (a taken port, an unreachable
 * folder, a bad variable). The launcher prints its message without a stack
 * trace; anything else is a bug and is printed whole.
 */
export class DevstackError extends Error {
  override readonly name = 'DevstackError';
}

export function isDevstackError(error: unknown): error is DevstackError {
  return error instanceof DevstackError;
}
