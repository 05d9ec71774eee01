/** What every bench does with its command line: --help, numeric flags, and how the process ends. */

/** Prints `help` and exits when --help was given. */
export function exitOnHelp(help: string, asked: boolean | undefined): void {
  if (!asked) return;
  console.log(help);
  process.exit(0);
}

export interface NumberRange {
  min: number;
  max?: number;
  /** Only whole numbers. Default true. */
  whole?: boolean;
}

/** The value of `--name` as a number in range, or exit 2 with the help text (a bench's flags are checked before anything starts). */
export function numberFlag(
  help: string,
  name: string,
  raw: string | undefined,
  { min, max = Infinity, whole = true }: NumberRange,
): number {
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max || (whole && !Number.isInteger(value))) {
    const range = max === Infinity ? `>= ${min}` : `in [${min}, ${max}]`;
    console.error(`--${name} must be ${whole ? "an integer" : "a number"} ${range}\n\n${help}`);
    process.exit(2);
  }
  return value;
}

/** Runs the bench and exits: 0 once it printed its figures (open handles must not keep it up), 1 with the error. */
export function runBench(main: () => Promise<void>, name: string): void {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(`${name} failed:`, error);
      process.exit(1);
    },
  );
}
