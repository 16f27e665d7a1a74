import type { TestProject } from 'vitest/node';
import { pgliteTemplate } from './pglite-template.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A migrated PGlite data directory to copy (see pglite-template.ts). */
    pgliteTemplate: string;
  }
}

/** Runs once per `vitest run`, before any test file. */
export default async function setup(project: TestProject): Promise<void> {
  project.provide('pgliteTemplate', await pgliteTemplate());
}
