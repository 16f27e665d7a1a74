// Command-line options of the benchmarks: `--name value`, the fallback when it is absent.

/** A number option; present without a value it reads as NaN. */
export function numberOption(args: string[], name: string, fallback: number): number {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? Number(args[at + 1]) : fallback;
}

/** A text option; present without a value it falls back too. */
export function textOption(args: string[], name: string, fallback: string): string {
  const at = args.indexOf(`--${name}`);
  return at >= 0 && args[at + 1] ? (args[at + 1] as string) : fallback;
}
