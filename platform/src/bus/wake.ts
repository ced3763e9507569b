/** A wake-up signal with a fallback tick: `wait()` resolves on `wake()` or after `ms`. */
export class Wake {
  private waiter: (() => void) | null = null;
  private pending = false;

  wake(): void {
    this.pending = true;
    const w = this.waiter;
    this.waiter = null;
    w?.();
  }

  wait(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.waiter = null;
        resolve();
      }, ms);
      t.unref?.();
      this.waiter = () => {
        clearTimeout(t);
        this.pending = false;
        resolve();
      };
    });
  }
}
