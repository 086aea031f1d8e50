/**
 * Upstreams that misbehave on purpose, for the http source's limits: a gzip
 * bomb (a few MB that inflate to gigabytes) and a chunked body without end.
 * Both are made by streaming, never held in memory.
 */
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';

const MiB = 1024 * 1024;

/**
 * Write a gzip file that inflates to `inflatedBytes`: the start of a valid
 * source document (`{"items":{"a":1}`) and then spaces, which JSON allows
 * between tokens, so a reader finds nothing wrong until it has inflated past
 * its cap. Level 1 keeps the making fast (about 1 s per GiB); the file is
 * about 1/230 of what it inflates to. Returns the file's size.
 */
export async function writeGzipBomb(path: string, inflatedBytes: number): Promise<number> {
  const prefix = Buffer.from('{"items":{"a":1}');
  const spaces = Buffer.alloc(MiB, 0x20);
  let left = inflatedBytes - prefix.length;
  let started = false;
  const source = new Readable({
    read() {
      if (!started) {
        started = true;
        this.push(prefix);
        return;
      }
      if (left <= 0) {
        this.push(null);
        return;
      }
      const chunk = left >= spaces.length ? spaces : spaces.subarray(0, left);
      left -= chunk.length;
      this.push(chunk);
    },
  });
  await pipeline(source, createGzip({ level: 1 }), createWriteStream(path));
  return statSync(path).size;
}

/** Send a gzip file as a gzip-encoded JSON body with its (small) Content-Length, as a bomb would be. */
export function sendGzipFile(res: ServerResponse, path: string): void {
  res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(statSync(path).size) });
  createReadStream(path).pipe(res);
}

/**
 * Send a chunked JSON body (no Content-Length) of `totalBytes`: the same run
 * of plausible items again and again (repeated keys are still JSON), written
 * as fast as the reader takes them, until the total or until the reader
 * hangs up. Resolves with the bytes written.
 */
export function sendEndlessJson(res: ServerResponse, totalBytes: number): Promise<number> {
  res.writeHead(200, { 'content-type': 'application/json' });
  const at = new Date(Date.now() - 60_000).toISOString();
  const items: string[] = [];
  for (let i = 0; i < 1000; i++) items.push(`"k${i}":{"value":${1000 + i}.25,"updated_at":"${at}"},`);
  const run = Buffer.from(items.join(''));
  let sent = 0;
  return new Promise((resolve) => {
    const done = () => resolve(sent);
    res.on('close', done);
    const pump = () => {
      while (!res.destroyed && sent < totalBytes) {
        const chunk = sent === 0 ? Buffer.concat([Buffer.from('{"items":{'), run]) : run;
        sent += chunk.length;
        if (!res.write(chunk)) {
          res.once('drain', pump);
          return;
        }
      }
      if (!res.destroyed) res.end('"z":1}}', done);
    };
    pump();
  });
}
