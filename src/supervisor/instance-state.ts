/**
 * The named states of a model instance and of each replica (contract §3.1), and the
 * changes allowed between them. A change not listed here is a bug, and throws.
 */
export type InstanceState = 'CREATING' | 'READY' | 'ERROR' | 'TERMINATING' | 'TERMINATED';

const ALLOWED: Record<InstanceState, readonly InstanceState[]> = {
  CREATING: ['READY', 'ERROR', 'TERMINATING'],
  READY: ['ERROR', 'TERMINATING'],
  // An instance in ERROR can still be terminated (cleans up whatever is left);
  // a replica in ERROR may be restarted (CREATING) by the recovery policy.
  ERROR: ['TERMINATING', 'CREATING'],
  TERMINATING: ['TERMINATED'],
  TERMINATED: [],
};

export function canTransition(from: InstanceState, to: InstanceState): boolean {
  return ALLOWED[from].includes(to);
}

export function assertTransition(what: string, from: InstanceState, to: InstanceState): void {
  if (!canTransition(from, to)) throw new Error(`${what}: state change ${from} -> ${to} is not allowed`);
}
