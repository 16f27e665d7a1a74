import cliProgress from 'cli-progress';

/**
 * Progress on stderr, so stdout stays the one-line summary scripts can read. Piped (CI, logs,
 * `nohup`), it prints a line every few seconds instead of nothing at all.
 */
export const progressBar = (label: string, unit: string) =>
  new cliProgress.SingleBar(
    {
      format: `${label} [{bar}] {percentage}% | {value}/{total} ${unit} | {eta_formatted} left`,
      stream: process.stderr,
      noTTYOutput: true,
      notTTYSchedule: 5_000,
    },
    cliProgress.Presets.shades_classic,
  );
