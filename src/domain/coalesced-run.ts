/**
 * An async job that never runs twice at once: a call while it runs shares
 * that run and asks for one more after it, however many ask, so whatever
 * changed meanwhile is still seen. `mayRepeat` can refuse that follow-up
 * (a reader that has stopped).
 */
export class CoalescedRun {
  private running: Promise<void> | null = null;
  private again = false;

  constructor(
    private readonly job: () => Promise<void>,
    private readonly mayRepeat: () => boolean = () => true,
  ) {}

  /** Run the job, or join the run under way (and have it run once more after). */
  run(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.job().finally(() => {
      this.running = null;
      if (this.again && this.mayRepeat()) {
        this.again = false;
        void this.run();
      }
    });
    return this.running;
  }
}
