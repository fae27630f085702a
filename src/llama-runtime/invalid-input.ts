/**
 * What the caller got wrong (a bad argument, a prompt too long, a bad model file):
 * answered as ERROR `invalid` or LOAD_FAILED `invalid`, the Python runtime's
 * ValueError/TypeError and InvalidModel. Anything else thrown is `internal`.
 */
export class InvalidInput extends Error {
  override name = 'InvalidInput';
}

/** A call stopped by its ABORT: answered as ERROR `aborted`. */
export class CallAborted extends Error {
  override name = 'CallAborted';
  constructor() {
    super('The call was aborted');
  }
}
