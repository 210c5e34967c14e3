/**
 * The one error type of the platform. Anything thrown that is not an AppError
 * is a programmer error: it is logged whole and answered with a bland 500.
 */
export interface FieldError {
  field: string;
  message: string;
}

export interface AppErrorOptions {
  /** Short machine-readable slug, becomes the problem `type` (urn:msp:problem:<slug>). */
  code?: string;
  title?: string;
  errors?: FieldError[];
  /** Extra members of the problem document (RFC 9457 extension members). */
  extensions?: Record<string, unknown>;
  /** Response headers that belong to this error (WWW-Authenticate, Retry-After, ...). */
  headers?: Record<string, string>;
  cause?: unknown;
}

export const STATUS_TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  412: 'Precondition Failed',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export class AppError extends Error {
  readonly status: number;
  readonly code: string | undefined;
  readonly title: string;
  readonly errors: FieldError[] | undefined;
  readonly extensions: Record<string, unknown>;
  readonly headers: Record<string, string>;
  /** Operational errors are expected outcomes of bad input or state, not bugs. */
  readonly isOperational = true;

  constructor(status: number, detail: string, options: AppErrorOptions = {}) {
    super(detail, { cause: options.cause });
    this.name = 'AppError';
    this.status = status;
    this.code = options.code;
    this.title = options.title ?? STATUS_TITLES[status] ?? 'Error';
    this.errors = options.errors;
    this.extensions = options.extensions ?? {};
    this.headers = options.headers ?? {};
  }
}

export const badRequest = (detail: string, options?: AppErrorOptions) => new AppError(400, detail, options);
export const validationFailed = (errors: FieldError[], detail = 'The request is not valid.') =>
  new AppError(400, detail, { code: 'validation-error', title: 'Validation failed', errors });
export const notFound = (detail = 'The resource does not exist.', options?: AppErrorOptions) =>
  new AppError(404, detail, { code: 'not-found', ...options });
export const conflict = (detail: string, options?: AppErrorOptions) =>
  new AppError(409, detail, { code: 'conflict', ...options });
export const unprocessable = (detail: string, options?: AppErrorOptions) =>
  new AppError(422, detail, { code: 'unprocessable', ...options });

/**
 * The 503 of a bounded export whose every slot stayed taken (`busy`: @msp/db's ExportSlotsBusyError):
 * `what` names the export in the detail, Retry-After says when to come back.
 */
export const exportCapacityExhausted = (
  what: string,
  busy: Error & { size: number; acquireTimeoutMs: number },
  retryAfterSeconds: number,
) =>
  new AppError(
    503,
    `Every connection of the ${what} is busy (${busy.size} exports at once) and none came free within ` +
      `${busy.acquireTimeoutMs} ms. Retry after the time given in Retry-After.`,
    { code: 'export-capacity-exhausted', headers: { 'Retry-After': String(retryAfterSeconds) }, cause: busy },
  );

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}
