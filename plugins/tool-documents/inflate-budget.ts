/**
 * Bounded decompression for pdf-lib. Loading a PDF decodes its object and cross-reference streams (Flate, LZW,
 * run-length, ASCII85/hex), and a few kilobytes of Flate can inflate to gigabytes. Every pdf-lib decoder grows its
 * output through one method, DecodeStream's `ensureBuffer`; it is wrapped (once per pdf-lib instance, reached through
 * the public `decodePDFRawStream`) to count what each stream and the whole read inflate, and to stop past a bound.
 * The bound is the read's own (AsyncLocalStorage): parallel reads each count their own, other callers none.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** Bytes one stream may inflate to, and all streams of one read together (powers of two: see ensureBuffer). */
export const INFLATE_LIMITS = { perStream: 32 * 1024 * 1024, total: 96 * 1024 * 1024 };

interface Budget {
  perStream: number;
  total: number;
  used: number;
  /** Set once a bound was passed (pdf-lib may catch the error and go on: the read still fails). */
  exceeded?: string;
}

/** Thrown inside pdf-lib when a stream inflates past a bound. */
export class InflateLimitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InflateLimitError';
  }
}

const budgets = new AsyncLocalStorage<Budget>();
/** Prototypes already wrapped: a process-wide fact about a loaded library, not per-session state. */
const wrapped = new WeakSet<object>();

type PdfLibCore = Pick<typeof import('pdf-lib'), 'PDFContext' | 'PDFRawStream' | 'decodePDFRawStream'>;

type Grower = (this: object, requested: number) => Uint8Array;

/** Wraps pdf-lib's decoders; false when its internals are not as expected (then PDFs are not read at all). */
export function installInflateBudget(lib: PdfLibCore): boolean {
  let proto: Record<string, unknown> | null;
  try {
    const context = lib.PDFContext.create();
    const sample = lib.decodePDFRawStream(lib.PDFRawStream.of(context.obj({ Filter: 'ASCIIHexDecode' }), new Uint8Array(0)));
    proto = Object.getPrototypeOf(sample) as Record<string, unknown> | null;
  } catch {
    return false;
  }
  while (proto && !Object.prototype.hasOwnProperty.call(proto, 'ensureBuffer')) proto = Object.getPrototypeOf(proto) as Record<string, unknown> | null;
  if (!proto || typeof proto.ensureBuffer !== 'function') return false;
  if (wrapped.has(proto)) return true;
  const original = proto.ensureBuffer as Grower;
  const grown = new WeakMap<object, number>();
  proto.ensureBuffer = function ensureBuffer(this: object, requested: number): Uint8Array {
    const budget = budgets.getStore();
    const before = grown.get(this) ?? 0;
    if (!budget || requested <= before) return original.call(this, requested);
    if (budget.exceeded) throw new InflateLimitError(budget.exceeded);
    if (requested > budget.perStream) {
      budget.exceeded = `a compressed stream inflates to more than ${mb(budget.perStream)}`;
      throw new InflateLimitError(budget.exceeded);
    }
    // Counted as allocated: the decoder grows its buffer in powers of two (at most the per-stream bound, itself one).
    const buffer = original.call(this, requested);
    budget.used += buffer.byteLength - before;
    grown.set(this, buffer.byteLength);
    if (budget.used > budget.total) {
      budget.exceeded = `its compressed streams inflate to more than ${mb(budget.total)} in all`;
      throw new InflateLimitError(budget.exceeded);
    }
    return buffer;
  };
  wrapped.add(proto);
  return true;
}

const mb = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MB`;

/**
 * Runs `work` with inflation bounded; returns its value, or the reason the bound stopped it (also when pdf-lib
 * caught the error and carried on, or failed with an error of its own afterwards).
 */
export async function withInflateBudget<T>(work: () => Promise<T>, limits = INFLATE_LIMITS): Promise<{ value: T } | { exceeded: string }> {
  const budget: Budget = { ...limits, used: 0 };
  try {
    const value = await budgets.run(budget, work);
    return budget.exceeded ? { exceeded: budget.exceeded } : { value };
  } catch (err) {
    if (budget.exceeded) return { exceeded: budget.exceeded };
    throw err;
  }
}
