import { randomBytes } from 'node:crypto';

export interface StoredMedia {
  data: Buffer;
  contentType: string;
  expiresAt: number;
}

/** How long a generated file's link works, and how much the store holds at most. */
export const MEDIA_TTL_MS = 60 * 60 * 1000;
export const MEDIA_MAX_BYTES = 1024 * 1024 * 1024;

/**
 * Generated images and videos answered as `url` (contract §4): kept in memory under
 * a random unguessable id, served by GET /v1/media/{id} (guarded like every route),
 * gone after MEDIA_TTL_MS or when newer files need the room. The link never names
 * a path on the server (Xinference answers with its own file path).
 */
export class MediaStore {
  private readonly files = new Map<string, StoredMedia>();
  private bytes = 0;

  constructor(
    private readonly ttlMs = MEDIA_TTL_MS,
    private readonly maxBytes = MEDIA_MAX_BYTES,
    private readonly now: () => number = Date.now,
  ) {}

  /** Stores a file and returns its id (with the extension, so a saved link keeps its type). */
  put(data: Buffer, contentType: string, extension: string): string {
    this.sweep();
    const id = `${randomBytes(18).toString('base64url')}.${extension}`;
    this.files.set(id, { data, contentType, expiresAt: this.now() + this.ttlMs });
    this.bytes += data.length;
    // Oldest first: a Map iterates in insertion order.
    for (const [oldId, file] of this.files) {
      if (this.bytes <= this.maxBytes || oldId === id) break;
      this.drop(oldId, file);
    }
    return id;
  }

  get(id: string): StoredMedia | undefined {
    this.sweep();
    return this.files.get(id);
  }

  private sweep(): void {
    const now = this.now();
    for (const [id, file] of this.files) if (file.expiresAt <= now) this.drop(id, file);
  }

  private drop(id: string, file: StoredMedia): void {
    this.files.delete(id);
    this.bytes -= file.data.length;
  }
}
