/** The address cannot be listened on: one line saying which and why, never taken for a database error. */
export class ListenError extends Error {
  constructor(host: string, port: number, cause: NodeJS.ErrnoException) {
    const why =
      cause.code === 'EADDRINUSE'
        ? 'another process is listening there; stop it, or set NERKH_PORT'
        : cause.code === 'EACCES'
          ? 'not permitted (ports below 1024 need privileges); set NERKH_PORT'
          : cause.code === 'EADDRNOTAVAIL'
            ? 'this host has no such address; set NERKH_HOST'
            : (cause.code ?? cause.message);
    super(`cannot listen on ${host}:${port}: ${why}`);
  }
}
