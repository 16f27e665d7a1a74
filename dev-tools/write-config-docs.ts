/**
 * Writes the variable tables of docs/configuration.md from the declarations in
 * libs/config/variables/; test/lifecycle/config-docs.test.ts fails while the page differs from them.
 *
 *   npm run docs:config
 */
import fs from 'node:fs';
import { withConfigTables } from '../libs/config/config-tables.ts';

const file = 'docs/configuration.md';
const before = fs.readFileSync(file, 'utf8');
const after = withConfigTables(before);
if (after !== before) fs.writeFileSync(file, after);
console.log(after === before ? `${file} is current` : `${file} rewritten`);
