// Prints the slowest test files of vitest JSON reports: where a suite's time goes.
//   node .ci/slowest-files.mjs reports/node20-embedded.json [count]
import fs from 'node:fs';
import path from 'node:path';

const [file, count = '12'] = process.argv.slice(2);
const report = JSON.parse(fs.readFileSync(file, 'utf8'));
const rows = report.testResults
  .map((result) => ({
    file: path.relative(process.cwd(), result.name),
    seconds: (result.endTime - result.startTime) / 1000,
    tests: result.assertionResults.length,
  }))
  .sort((a, b) => b.seconds - a.seconds);
const total = rows.reduce((sum, row) => sum + row.seconds, 0);
const wall = (Math.max(...report.testResults.map((r) => r.endTime)) - report.startTime) / 1000;
console.log(
  `${path.basename(file)}: ${rows.length} files, ${total.toFixed(0)} s in files, ${wall.toFixed(0)} s wall`,
);
for (const row of rows.slice(0, Number(count))) {
  console.log(
    `  ${row.seconds.toFixed(1).padStart(7)} s  ${String(row.tests).padStart(3)} tests  ${row.file}`,
  );
}
