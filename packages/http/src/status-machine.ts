import { unprocessable } from './errors';

/**
 * A status machine from the moves each state allows (tickets in desk, leaves in hr). Staying put
 * is not a move and is always allowed; a state with no moves is final.
 */
export function statusMachine<S extends string>(next: Record<S, readonly S[]>) {
  return {
    /** The states a resource in `from` may move to. */
    allowedTransitions: (from: S): readonly S[] => next[from],
    canTransition: (from: S, to: S): boolean => from === to || next[from].includes(to),
    isFinal: (status: S): boolean => next[status].length === 0,
  };
}

/**
 * The 422 of a move the machine does not allow: it names the current state and the states that
 * are allowed from it, so a client can offer only those (`urn:msp:problem:<code>`).
 */
export function transitionProblem(
  current: string,
  allowed: readonly string[],
  detail: string,
  code = 'illegal-transition',
) {
  return unprocessable(detail, { code, extensions: { current_status: current, allowed_transitions: allowed } });
}
