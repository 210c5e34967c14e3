import type { components } from './generated/desk';

/**
 * An RFC 9457 problem document, as every 4xx and 5xx of desk, link and hr carries it: `type` is
 * `urn:msp:problem:<code>` (stable, for branching), `errors` names the fields of a 400 or 422,
 * and extension members say what the caller needs to act (`allowed_transitions`, `existing_id`, …).
 */
export type Problem = components['schemas']['Problem'];

/** Whether a value (an openapi-fetch `error`, a parsed body) is a problem document. */
export function isProblem(value: unknown): value is Problem {
  if (value === null || typeof value !== 'object') return false;
  const { type, title, status } = value as Record<string, unknown>;
  return typeof type === 'string' && typeof title === 'string' && typeof status === 'number';
}

/** A failed call, thrown by the helpers that cannot answer `{ data, error }` (pages, tokens). */
export class ProblemError extends Error {
  readonly status: number;
  /** The problem document the service answered, when the body was one. */
  readonly problem: Problem | undefined;
  readonly response: Response;

  constructor(response: Response, body: unknown) {
    const problem = isProblem(body) ? body : undefined;
    super(
      problem ? `${response.status} ${problem.type}: ${problem.detail}` : `${response.status} ${response.statusText}`,
    );
    this.name = 'ProblemError';
    this.status = response.status;
    this.problem = problem;
    this.response = response;
  }
}
