import { watch, type FSWatcher } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { systemClock, type Clock } from '../domain/clock.js';
import { parseSourceDocument, type SourceData } from './parse.js';
import type { SourceReader } from './reader.js';

/**
 * A JSON file on disk. It is re-read only when its modification time or size
 * changes (the cache key), found by watching its folder, with a stat poll as
 * a fallback for filesystems where watching is unreliable.
 */
export class FileSourceReader implements SourceReader {
  private signature: string | null = null;
  private watcher: FSWatcher | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly path: string,
    private readonly pollSeconds: number,
    private readonly clock: Clock = systemClock,
  ) {}

  async readIfChanged(): Promise<SourceData | null> {
    let info;
    try {
      info = await stat(this.path, { bigint: true });
    } catch (error) {
      this.signature = null;
      throw error;
    }
    const signature = `${info.mtimeNs}:${info.size}:${info.ino}`;
    if (signature === this.signature) return null;
    const text = await readFile(this.path, 'utf8');
    // Remember the signature once read but before parsing: a corrupt file is not re-parsed
    // until it changes, while an unreadable one (permissions) is retried at every poll.
    this.signature = signature;
    return parseSourceDocument(text, Number(info.mtimeMs), this.clock.now());
  }

  start(onHint: () => void): void {
    const name = basename(this.path);
    try {
      this.watcher = watch(dirname(this.path), { persistent: false }, (_event, file) => {
        if (file === null || file === name) onHint();
      });
      this.watcher.on('error', () => this.watcher?.close());
    } catch {
      // The folder may not exist yet; the poll below still finds the file when it appears.
      this.watcher = null;
    }
    this.timer = setInterval(onHint, this.pollSeconds * 1000);
    this.timer.unref();
  }

  stop(): void {
    this.watcher?.close();
    this.watcher = null;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
