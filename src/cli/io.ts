export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** stdout is a terminal: colours and code frames. */
  isTTY: boolean;
  /** stderr is a terminal: the progress line. */
  stderrIsTTY?: boolean;
  /** Width of the terminal on stderr. */
  columns?: number;
  cwd: string;
  env?: NodeJS.ProcessEnv;
}
