import { splitHeld } from './holdback.js';

/**
 * Stop strings: generation ends where one appears, and the text returned never
 * contains it. A piece ending with what could be the start of a stop string is held
 * back until the next piece says whether it is one.
 */
export class StopScanner {
  private readonly stops: string[];
  private held = '';
  stopped = false;
  /** The stop string that ended the text (the first to appear; of two at one place, the first given). */
  matched: string | null = null;

  constructor(stops: readonly string[]) {
    // An empty stop string would match everywhere; it stops nothing instead.
    this.stops = [...new Set(stops)].filter((s) => s.length > 0);
  }

  /** The part of the text so far that is safe to hand out; after a stop string, the text before it is the last. */
  feed(text: string): string {
    if (this.stopped) return '';
    text = this.held + text;
    let cut = -1;
    for (const stop of this.stops) {
      const at = text.indexOf(stop);
      if (at >= 0 && (cut < 0 || at < cut)) {
        cut = at;
        this.matched = stop;
      }
    }
    if (cut >= 0) {
      this.stopped = true;
      this.held = '';
      return text.slice(0, cut);
    }
    let safe: string;
    [safe, this.held] = splitHeld(text, this.stops);
    return safe;
  }

  /** What was held back, once generation ended for another reason. */
  flush(): string {
    const held = this.held;
    this.held = '';
    return held;
  }
}
