/** Where the lines go: the app's request logger. */
interface InfoLogger {
  info(details: object, message: string): void;
}

/** What admission refuses (key, plan or origin, rate limit, shed): a caller can send these without bound. */
const REFUSED_STATUSES: ReadonlySet<number> = new Set([401, 403, 429, 503]);
/** Keys folded at most in one second; past that every further key's refusals fold into one entry per status. */
const MAX_FOLDS = 10_000;
const SECOND_MS = 1000;

interface Fold {
  keyId: string | null;
  status: number;
  /** Refusals after the first, which was logged as usual. */
  count: number;
}

/**
 * Refused requests fold in the request log, as the usage error log folds
 * repeats: the first refusal of a key and status in a second is logged as any
 * request is, and the rest of that second are counted and written as one line
 * with the count once the second is over. A client spending its limit (or
 * trying keys that do not exist, all folded as one caller) then writes at
 * most two lines a second per status, however fast it sends.
 */
export class RefusedRequestLog {
  private second = -1;
  private readonly folds = new Map<string, Fold>();
  private timer: NodeJS.Timeout | null = null;
  private log: InfoLogger | null = null;

  /** Whether a request answered `status` should write its own line (a refused one only if it is the first of its key and status in its second). */
  ownLine(log: InfoLogger, keyId: string | null, status: number, now: number): boolean {
    if (!REFUSED_STATUSES.has(status)) return true;
    const second = Math.floor(now / SECOND_MS);
    if (second !== this.second) {
      this.flush();
      this.second = second;
    }
    const foldKey = this.folds.size >= MAX_FOLDS ? `*${status}` : `${keyId ?? ''}\u0000${status}`;
    const fold = this.folds.get(foldKey);
    if (!fold) {
      this.folds.set(foldKey, { keyId: foldKey.startsWith('*') ? '*' : keyId, status, count: 0 });
      return true;
    }
    fold.count++;
    this.log = log;
    // Written when the second is over, by the next refusal or, if none comes, by this timer.
    this.timer ??= setTimeout(() => this.flush(), SECOND_MS - (now % SECOND_MS) + 5).unref();
    return false;
  }

  /** Write one line per key and status with refusals folded in the second gone by. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const second = new Date(this.second * SECOND_MS).toISOString();
    for (const fold of this.folds.values()) {
      if (fold.count > 0) this.log?.info({ key_id: fold.keyId, status: fold.status, refused: fold.count, second }, 'more refused requests like the one logged, folded into this line');
    }
    this.folds.clear();
  }
}
