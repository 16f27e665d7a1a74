import type { PGlite } from '@electric-sql/pglite';
import { NodeFS } from '@electric-sql/pglite/nodefs';

type PostgresMod = Parameters<NodeFS['init']>[1];

/** What this file relies on in Emscripten's NODEFS (the file system PGlite writes through). */
interface Nodefs {
  doSetAttr(
    target: unknown,
    node: unknown,
    attr: unknown,
    chmod: (target: unknown, mode: number) => void,
    ...rest: unknown[]
  ): void;
  node_ops: { mknod(parent: unknown, name: string, mode: number, dev: unknown): unknown };
}

const GROUP_AND_OTHER = 0o077;

/**
 * PGlite's files in a directory, the owner's alone. PGlite writes a new data directory from a
 * tarball (initdb's, run in memory, or `loadDataDir`'s) and gives each file its mode in the
 * tarball with an explicit chmod, 0666 for most: no umask limits that. Every mode its file
 * system sets on disk (on creating a file or folder, and on chmod) loses its group and other
 * bits here, whatever the process's umask; Postgres itself asks for 0600 and 0700.
 */
export class OwnerOnlyNodeFS extends NodeFS {
  override init(pg: PGlite, opts: Partial<PostgresMod>) {
    const preRun = [...(opts.preRun ?? []), (mod: PostgresMod) => ownerOnly(mod.NODEFS)];
    return super.init(pg, { ...opts, preRun });
  }
}

function ownerOnly(fileSystem: unknown): void {
  const nodefs = fileSystem as Partial<Nodefs> | undefined;
  const doSetAttr = nodefs?.doSetAttr;
  const mknod = nodefs?.node_ops?.mknod;
  if (!nodefs?.node_ops || typeof doSetAttr !== 'function' || typeof mknod !== 'function') {
    // Never run with files others may rewrite: a PGlite whose file system changed stops here.
    throw new Error(
      "PGlite's file system (Emscripten NODEFS) lacks doSetAttr or mknod: its files cannot be kept owner-only",
    );
  }
  const ops = nodefs.node_ops;
  nodefs.doSetAttr = (target, node, attr, chmod, ...rest) =>
    doSetAttr.call(
      nodefs,
      target,
      node,
      attr,
      (path, mode) => chmod(path, mode & ~GROUP_AND_OTHER),
      ...rest,
    );
  ops.mknod = (parent, name, mode, dev) =>
    mknod.call(ops, parent, name, mode & ~GROUP_AND_OTHER, dev);
}
