import type { z } from 'zod';
import type { AppError } from '../../shared/errors.js';
import type { Ctx } from '../context.js';
import type { EndpointName, OutputOf } from '../endpoints/index.js';

/**
 * A dialect is one way of answering the same endpoints: the spec's shapes (`/v0`) or the shapes a
 * family of existing clients reads (`/jiffyscan/v0`). Every endpoint runs the same handler and
 * cache; a dialect only says, per endpoint whose shape differs, how the spec answer is presented
 * and what schema that presentation has (for its OpenAPI document and its typed tRPC router).
 */
export type Presentation<K extends EndpointName = EndpointName, TLive extends z.ZodType = z.ZodType> = {
  output: TLive;
  /** The answer in this dialect, from the spec answer (`ctx` for the rare shape that adds data). */
  present(spec: OutputOf<K>, ctx: Ctx): z.input<TLive> | Promise<z.input<TLive>>;
  /**
   * The answer in this dialect where the spec's is a 404, for clients that read "nothing" from a
   * 200 body (absent: the 404 as the spec answers it).
   */
  notFound?(error: AppError): z.input<TLive>;
};

export type Presentations = { [K in EndpointName]?: Presentation<K> };

export type Dialect<P extends Presentations = Presentations> = {
  /** Names the dialect in cache keys (answers of two dialects never share an entry) and in the tRPC router. */
  name: string;
  /** REST base path. */
  basePath: string;
  /** Title and introduction of its OpenAPI document. */
  title: string;
  description: string;
  presentations: P;
};

/** A presentation of endpoint `K`: the name only ties the spec answer's type to the function. */
export const presentation = <K extends EndpointName, TLive extends z.ZodType>(
  _name: K,
  output: TLive,
  present: Presentation<K, TLive>['present'],
  notFound?: Presentation<K, TLive>['notFound'],
): Presentation<K, TLive> => ({ output, present, ...(notFound ? { notFound } : {}) });

/** The answer of endpoint `name` in a dialect whose presentations are `P`. */
export type DialectOutputOf<P extends Presentations, K extends EndpointName> =
  P[K] extends Presentation<K, infer TLive> ? z.input<TLive> : OutputOf<K>;
