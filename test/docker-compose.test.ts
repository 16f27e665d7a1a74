import fs from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

describe('docker-compose.yml', () => {
  it('parses and runs the whole stack: engines, api, projector, prometheus', async () => {
    const compose = parse(await fs.readFile('docker-compose.yml', 'utf8'), { merge: true });
    expect(Object.keys(compose.services).sort()).toEqual(
      ['api', 'clickhouse', 'postgres', 'projector', 'prometheus', 'redis'].sort(),
    );
    expect(compose.services.api.environment).toMatchObject({
      CAIRN_ROLE: 'api',
      DATABASE_URL: expect.stringMatching(/^postgres:\/\//),
      CLICKHOUSE_URL: expect.stringMatching(/^http:\/\//),
      REDIS_URL: expect.stringMatching(/^redis:\/\//),
    });
    expect(compose.services.projector.environment.CAIRN_ROLE).toBe('projector');
    const scrape = parse(compose.configs.prometheus.content);
    const targets = scrape.scrape_configs.flatMap((job: any) => job.static_configs[0].targets);
    expect(targets).toEqual(['api:8080', 'projector:8080']);
    await fs.access(compose.services.api.build.dockerfile);
  });
});
