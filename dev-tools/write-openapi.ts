/**
 * Writes the API document the server serves to a file (or stdout), without starting a server
 * or opening an engine: the route factories only read their dependencies when a request comes,
 * so the route table is built with none, and with the settings the document states (the
 * query row cap) at their defaults. Used by .ci/api-lint.sh.
 *
 *   npx tsx dev-tools/write-openapi.ts [out.json]
 */
import fs from 'node:fs';
import { queryBodySchema } from '../libs/analytics/parse/query.schemas.ts';
import { queryRoutes } from '../libs/analytics/query.routes.ts';
import { tokenRoutes } from '../libs/auth/token.routes.ts';
import { loadConfig } from '../libs/config/config.ts';
import { buildOpenApi } from '../libs/http/openapi.ts';
import { dependencyRoutes } from '../libs/tasks/dependency.routes.ts';
import { taskRoutes } from '../libs/tasks/task.routes.ts';
import { embedRoutes } from '../libs/views/embed.routes.ts';
import { viewRoutes } from '../libs/views/view.routes.ts';
import { viewGaugeRoutes } from '../libs/views/view-gauges.routes.ts';

// The same factories, in the same order, as apps/server/cairn.ts; never called, so never needed.
const unused = {} as never;
const defaults = loadConfig({});
const routes = [
  ...tokenRoutes(unused),
  ...taskRoutes(unused, { maxListDepth: defaults.taskListMaxDepth }),
  ...dependencyRoutes(unused),
  ...queryRoutes({ maxRows: defaults.queryMaxRows } as never),
  ...viewRoutes({ querySchema: queryBodySchema(defaults.queryMaxRows) } as never),
  ...embedRoutes({ querySchema: queryBodySchema(defaults.queryMaxRows) } as never),
  ...viewGaugeRoutes(unused),
];
const text = `${JSON.stringify(buildOpenApi(routes), null, 2)}\n`;
const out = process.argv[2];
if (out) fs.writeFileSync(out, text);
else process.stdout.write(text);
