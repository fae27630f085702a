// ABORT and CALL travel on different sockets, so an ABORT may come first: the last
// this many aborted ids are remembered (docs/runtime-protocol.md, "Abort").
const REMEMBERED = 4096;

/** Ids aborted before their CALL arrived, oldest forgotten first. */
export class AbortedIds {
  private readonly ids = new Set<number>();

  add(id: number): void {
    this.ids.add(id);
    if (this.ids.size > REMEMBERED) this.ids.delete(this.ids.values().next().value!);
  }

  /** Whether `id` was aborted before its CALL; forgets it (ids are never reused). */
  take(id: number): boolean {
    return this.ids.delete(id);
  }
}
