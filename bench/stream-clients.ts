/**
 * The stream bench's client processes (bench/stream-client.mjs), driven over
 * IPC. The same processes hold the streams on nerkh, then on each anchor
 * (a reset between), so every server is read by the same readers.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './processes.js';

export interface ClientReport {
  receipts: Record<string, number[]>;
  snapshots: number;
  closed: number;
}

export interface Client {
  child: ChildProcess;
  next(type: string): Promise<Record<string, unknown>>;
}

export interface Opened {
  ok: number;
  failed: number;
  ms: number;
  firstError: string | null;
}

export function startClient(children: ChildProcess[]): Promise<Client> {
  const child = fork(join(ROOT, 'bench', 'stream-client.mjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.push(child);
  const waiting = new Map<string, (message: Record<string, unknown>) => void>();
  child.on('message', (message: Record<string, unknown>) => {
    const resolve = waiting.get(message.type as string);
    waiting.delete(message.type as string);
    resolve?.(message);
  });
  const client: Client = { child, next: (type) => new Promise((resolve) => waiting.set(type, resolve)) };
  return client.next('ready').then(() => client);
}

/** `streams` streams to `url`, shared out over the clients. */
export async function openStreams(clients: Client[], url: string, headers: Record<string, string>, streams: number): Promise<Opened> {
  const started = Date.now();
  const perClient = Math.ceil(streams / clients.length);
  const opened = await Promise.all(
    clients.map((client, i) => {
      client.child.send({ type: 'open', url, headers, count: Math.max(0, Math.min(perClient, streams - i * perClient)), concurrency: 64 });
      return client.next('opened');
    }),
  );
  return {
    ok: opened.reduce((sum, o) => sum + (o.ok as number), 0),
    failed: opened.reduce((sum, o) => sum + (o.failed as number), 0),
    ms: Date.now() - started,
    firstError: (opened.find((o) => o.firstError)?.firstError as string | undefined) ?? null,
  };
}

export function reports(clients: Client[]): Promise<ClientReport[]> {
  return Promise.all(
    clients.map((client) => {
      client.child.send({ type: 'report' });
      return client.next('report');
    }),
  ) as unknown as Promise<ClientReport[]>;
}

/** Closes every stream and forgets every receipt; the processes stay for the next server. */
export async function resetClients(clients: Client[]): Promise<void> {
  await Promise.all(
    clients.map((client) => {
      client.child.send({ type: 'reset' });
      return client.next('reset');
    }),
  );
}
