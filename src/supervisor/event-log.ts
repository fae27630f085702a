export type EventType = 'INFO' | 'WARNING' | 'ERROR';

export interface ModelEvent {
  event_type: EventType;
  /** Unix time in seconds, as Xinference reports it. */
  event_ts: number;
  event_content: string;
}

/** A model's recent events, newest last; older ones fall off past the cap (Xinference keeps 100). */
export class EventLog {
  private readonly events: ModelEvent[] = [];

  constructor(private readonly cap = 100) {}

  add(type: EventType, content: string): void {
    this.events.push({ event_type: type, event_ts: Math.floor(Date.now() / 1000), event_content: content });
    if (this.events.length > this.cap) this.events.splice(0, this.events.length - this.cap);
  }

  list(): ModelEvent[] {
    return [...this.events];
  }
}
