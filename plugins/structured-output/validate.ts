/** JSON Schema validation of the model's structured answer, with Ajv (draft 2020-12 and draft-07 keywords). */
import { KeelError } from '../../kernel/index.js';

export interface Validator {
  /** Undefined when the value is valid, else one line per problem, each naming the field. */
  check(value: unknown): string[] | undefined;
}

/** Compiles the user's schema once; a schema Ajv refuses is a one-line error naming `--json-schema`. */
export async function compileSchema(schema: Record<string, unknown>): Promise<Validator> {
  const { Ajv } = await import('ajv');
  const ajv = new Ajv({ allErrors: true, strict: false });
  let validate;
  try {
    validate = ajv.compile(schema);
  } catch (err) {
    throw new KeelError(`--json-schema: not a valid JSON Schema: ${err instanceof Error ? err.message : String(err)}`, { code: 'config', exitCode: 2 });
  }
  return {
    check(value) {
      if (validate(value)) return undefined;
      return (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'}: ${e.message ?? 'is invalid'}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`);
    },
  };
}
