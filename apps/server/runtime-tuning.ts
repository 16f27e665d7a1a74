import type http from 'node:http';
import type express from 'express';
import type { Config } from '../../libs/config/config.ts';
import { expressMessages } from '../../libs/runtime/express-messages.ts';
import { tricksToApply } from '../../libs/runtime/index.ts';
import { startYoungCollection } from '../../libs/runtime/young-collection.ts';

/** The runtime tricks (libs/runtime/index.ts) this process applies, as the places they plug in. */
export interface RuntimeTuning {
  /** The kernel's `onLargeBody` hook: a young collection, when that trick applies. */
  onLargeBody: (() => void) | undefined;
  /** Options for `http.createServer`: Express-born request and response classes, when that trick applies. */
  serverOptions(app: express.Express): http.ServerOptions;
  /** The names of the tricks applied, for the start-up log. */
  applied: string[];
}

/** Applies the switched-on tricks once, at start-up, before any body-check worker starts. */
export function applyRuntimeTuning(switches: Config['runtime'], nodeMajor?: number): RuntimeTuning {
  const apply = tricksToApply(switches, nodeMajor);
  const onLargeBody = apply.youngCollection ? startYoungCollection() : undefined;
  return {
    onLargeBody,
    serverOptions: (app) => (apply.expressMessages ? expressMessages(app) : {}),
    applied: [
      ...(onLargeBody ? ['young-collection'] : []),
      ...(apply.expressMessages ? ['express-messages'] : []),
    ],
  };
}
