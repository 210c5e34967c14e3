/**
 * `q` as a tsquery over a contact's search_words (see the migration contacts_search_words): each
 * whitespace-separated term a prefix of one of its words, all terms ANDed. Null when q has no term.
 *
 * A term with an '@' is an address or its start ('ada.lovelace@', 'ada@acme'): a prefix of a whole
 * address. '@acme.com' is a domain. Any other term loses the punctuation around it ('Lovelace,')
 * and keeps the punctuation inside it ('ada.lovelace', 'acme.com'): a prefix of a word of the name,
 * of a local part, a domain or one of their pieces.
 */
export function contactSearchQuery(q: string): string | null {
  const terms = q
    .toLowerCase()
    .split(/\s+/)
    .map((term) => (term.includes('@') && !term.startsWith('@') ? term : trimPunctuation(term)))
    .filter((term) => term !== '');
  return terms.length ? terms.map((term) => `${quotedLexeme(term)}:*`).join(' & ') : null;
}

function trimPunctuation(term: string): string {
  return term.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
}

/** A lexeme as tsquery's input reads it verbatim: quoted, its quotes and backslashes escaped. */
function quotedLexeme(term: string): string {
  return `'${term.replace(/['\\]/g, (c) => `\\${c}`)}'`;
}
