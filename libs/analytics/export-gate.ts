import { AppError } from '../http/errors.ts';

/**
 * How many exports each principal is downloading at once. A download holds no engine slot
 * (export-spool.ts), but it holds a spool file and a connection until its reader is done, so
 * one caller's stalled downloads are bounded too.
 */
export class ExportGate {
  private readonly open = new Map<string, number>();
  private readonly perPrincipal: number;

  constructor(perPrincipal: number) {
    this.perPrincipal = perPrincipal;
  }

  /** Takes a place for `principal`'s export, or refuses with 429; call the returned release once. */
  enter(principal: string): () => void {
    const count = this.open.get(principal) ?? 0;
    if (count >= this.perPrincipal) {
      throw new AppError(
        'rate_limited',
        `This caller already has ${count} downloads of exports in progress, the most allowed at once; start another once one has finished.`,
        {
          headers: { 'Retry-After': '5' },
          members: { downloading: count, max_downloading: this.perPrincipal },
        },
      );
    }
    this.open.set(principal, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.open.get(principal) ?? 1) - 1;
      if (left === 0) this.open.delete(principal);
      else this.open.set(principal, left);
    };
  }
}
