import { vi } from 'vitest';

/**
 * Captures what is written to process.stdout and process.stderr (the Powertools logger writes
 * through a Console on them) into `lines`, until `vi.restoreAllMocks()`.
 */
export function captureLogOutput(lines: string[]): void {
  const capture = (chunk: unknown) => {
    lines.push(String(chunk));
    return true;
  };
  vi.spyOn(process.stdout, 'write').mockImplementation(capture);
  vi.spyOn(process.stderr, 'write').mockImplementation(capture);
}
