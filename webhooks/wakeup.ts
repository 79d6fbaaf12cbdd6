/**
 * A loop's alarm clock: `wait(ms)` sleeps until `ms` pass or someone calls `wake()`. A wake that
 * comes while the loop is busy is remembered, so a NOTIFY is never lost between two waits.
 */
export class Wakeup {
  private ring: (() => void) | undefined;
  private rang = false;

  wake(): void {
    if (this.ring) {
      const ring = this.ring;
      this.ring = undefined;
      ring();
    } else {
      this.rang = true;
    }
  }

  wait(ms: number): Promise<void> {
    if (this.rang) {
      this.rang = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.ring = undefined;
        resolve();
      }, ms);
      this.ring = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
