/** What pg reports of a statement PostgreSQL refused: its SQLSTATE and, for a constraint, its name. */
interface PgError {
  code?: unknown;
  constraint?: unknown;
}

const sqlState = (error: unknown): string | undefined => {
  const code = (error as PgError | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
};

/** The name of the unique constraint (or index) a write ran into, when that is why it failed (23505). */
export function uniqueViolation(error: unknown): string | undefined {
  if (sqlState(error) !== '23505') return undefined;
  const constraint = (error as PgError).constraint;
  return typeof constraint === 'string' ? constraint : 'unknown';
}

/** A foreign key refused the write (23503): a row named another that does not exist, or is still named. */
export function isForeignKeyViolation(error: unknown): boolean {
  return sqlState(error) === '23503';
}

/**
 * Runs a write that a unique constraint may refuse and turns that refusal into `onDuplicate()`.
 * The constraint, not a prior read, decides: two concurrent writers cannot both pass.
 */
export async function unlessDuplicate<T>(write: Promise<T>, onDuplicate: (constraint: string) => Error): Promise<T> {
  try {
    return await write;
  } catch (error) {
    const constraint = uniqueViolation(error);
    if (constraint !== undefined) throw onDuplicate(constraint);
    throw error;
  }
}

/** Runs a deletion and turns a foreign key's refusal (another row came to name it meanwhile) into `onReferenced()`. */
export async function unlessReferenced<T>(write: Promise<T>, onReferenced: () => Error): Promise<T> {
  try {
    return await write;
  } catch (error) {
    if (isForeignKeyViolation(error)) throw onReferenced();
    throw error;
  }
}
