import type pg from 'pg';
import type { Send, Statement } from './postgres-send.ts';

/**
 * Kysely sends `query(text, values)`. A statement with parameters goes on as a named prepared
 * statement instead, so the server parses it once per connection and can keep its plan: the same
 * few statement shapes run thousands of times a second, and parsing and planning them each time
 * was most of the server's CPU for a page of dependents. Names are handed out for a bounded
 * number of texts (statements built with a varying number of values are many), so no connection
 * keeps more than that many; any text beyond runs unnamed as before, and so does a select list
 * with a star (see STAR).
 */
export function withPreparedNames(next: Send): Send {
  return (statement) => {
    const named = preparedForm(statement);
    return next(named ? [named] : statement);
  };
}

function preparedForm(statement: Statement): pg.QueryConfig | undefined {
  const [text, values] = statement;
  if (statement.length !== 2 || typeof text !== 'string' || !Array.isArray(values)) {
    return undefined;
  }
  if (values.length === 0) return undefined;
  let name = statementNames.get(text);
  if (name === undefined) {
    // Checked once per text: a named text has passed them already.
    if (text.length > MAX_PREPARED_TEXT || STAR.test(text)) return undefined;
    if (statementNames.size >= MAX_PREPARED_STATEMENTS) return undefined;
    name = `cairn_${statementNames.size + 1}`;
    statementNames.set(text, name);
  }
  return { name, text, values };
}

/**
 * `*` or `t.*` in a select or returning list: a prepared statement keeps the columns it
 * expanded to, and after a migration adds a column Postgres refuses to run it ("cached plan
 * must not change result type") until the connection ends. Such statements run unnamed;
 * `count(*)` is no star.
 */
const STAR = /(?:\.|\b(?:select|returning)\s+|,\s*)\*/i;
/** Texts that get a name, for the whole process, so each connection prepares at most this many. */
export const MAX_PREPARED_STATEMENTS = 256;
const MAX_PREPARED_TEXT = 16_384;
/** One name per statement text, for the whole process: pg refuses a name reused for other text. */
const statementNames = new Map<string, string>();
