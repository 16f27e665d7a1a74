import fs from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { AREAS } from '../../libs/config/areas.ts';
import { loadConfig } from '../../libs/config/config.ts';
import { configTable, withConfigTables } from '../../libs/config/config-tables.ts';
import { readVariables } from '../../libs/config/read-variables.ts';
import { HTTP } from '../../libs/config/variables/http.ts';
import { PORT } from '../../libs/config/variables/process.ts';

const PAGE = 'docs/configuration.md';

describe('docs/configuration.md and the variable declarations', () => {
  it('holds, under each area heading, the table its declarations make (npm run docs:config)', async () => {
    const page = await fs.readFile(PAGE, 'utf8');
    expect(withConfigTables(page), 'run npm run docs:config').toBe(page);
  });

  it('has no variable table that no area writes', async () => {
    const page = await fs.readFile(PAGE, 'utf8');
    const rows = page.split('\n').filter((line) => /^\| `[A-Z0-9_]+`/.test(line));
    const written = AREAS.flatMap((area) => configTable(area).slice(2));
    expect(rows).toEqual(written);
  });

  it('rewrites a row that no longer says what its declaration says', async () => {
    const page = await fs.readFile(PAGE, 'utf8');
    const row = page.split('\n').find((line) => line.startsWith('| `PORT`')) as string;
    const drifted = page.replace(row, row.replace('`8080`', '`9090`'));
    expect(drifted).not.toBe(page);
    expect(withConfigTables(drifted)).toBe(page);
  });

  it('declares each variable once, in one area', () => {
    const names = AREAS.flatMap((area) => area.variables.map((v) => v.name));
    expect(names.length).toBeGreaterThan(60);
    expect(new Set(names).size).toBe(names.length);
  });

  it('shows each literal default as it is declared, and a derived one in words', () => {
    const variables = AREAS.flatMap((area) => area.variables);
    let literals = 0;
    for (const variable of variables) {
      const value = variable.default;
      if (typeof value === 'number' || typeof value === 'string') {
        expect(variable.shown, variable.name).toMatch(new RegExp(`^\`${value}\`( \\(.+\\))?$`));
        literals++;
      } else if (typeof value === 'object' && value !== null && 'derive' in value) {
        expect(variable.shown, variable.name).not.toMatch(/^`\d/);
      }
    }
    expect(literals).toBeGreaterThan(40);
    const defaults = loadConfig({});
    expect(defaults.postgresPrepare).toBe(true);
    expect(variables.find((v) => v.name === 'CAIRN_PG_PREPARE')?.shown).toBe('`on`');
    expect(defaults.queryQueueWaitMs).toBe(2 * defaults.queryTimeoutMs);
  });

  it('refuses to read a variable that is not declared, so none goes undocumented', () => {
    const { read } = readVariables(HTTP.variables, { PORT: '9000' });
    expect(() => read(PORT)).toThrow(/PORT is read but not declared/);
  });
});
