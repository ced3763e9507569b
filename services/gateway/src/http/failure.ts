import { httpStatusOf, type Failure } from '@bindery/contracts';

/** A failure thrown from a hook, a parser or a plugin, answered as `{error}` by the error handler. */
export class HttpFailure extends Error {
  readonly statusCode: number;
  constructor(readonly failure: Failure) {
    super(failure.message);
    this.statusCode = httpStatusOf(failure.code);
  }
}
