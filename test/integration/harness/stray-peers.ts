import { connect } from 'node:net';

/** Connects to a socket that is not ours to speak on, says `payload` (or nothing), and leaves. */
export function pokeRaw(target: { path: string } | { port: number; host: string }, payload: string): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(target as never);
    socket.on('error', () => resolve());
    socket.on('connect', () => {
      if (payload) socket.write(payload);
      setTimeout(() => socket.destroy(), 50);
    });
    socket.on('close', () => resolve());
  });
}
