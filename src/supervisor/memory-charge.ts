/** What an instance holds: bytes of host RAM, and bytes on each GPU it uses (by index). */
export interface MemoryCharge {
  host: number;
  gpus: Record<number, number>;
}
