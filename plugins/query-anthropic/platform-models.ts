/**
 * Claude's model ids on the cloud platforms. One table: each Claude model (by its id, its undated id and Claude
 * Code's alias) with its dated id, from which both platforms' ids follow — Amazon Bedrock's
 * `<geo>.anthropic.<dated id>-v1:0` (a cross-region inference profile: `us`, `eu` or `apac`, from the region) and
 * Google Vertex AI's `<id>@<date>`. An id the table does not hold is carried over by the same rule (a dated id) or as
 * it is (undated); an id already in the platform's form (`anthropic.…`, `arn:…`, `…@…`) is sent unchanged.
 */

import { apiModel } from './models.js';

export type CloudPlatform = 'bedrock' | 'vertex';

/**
 * Claude ids and undated ids → the dated id. Newest first within a family. Aliases (`sonnet`, `opus`, `haiku`) are
 * models.ts's one table, resolved before a request is made.
 */
export const CLAUDE_MODELS: Record<string, string> = {
  'claude-opus-4-5': 'claude-opus-4-5-20251101',
  'claude-opus-4-1': 'claude-opus-4-1-20250805',
  'claude-opus-4-0': 'claude-opus-4-20250514',
  'claude-opus-4': 'claude-opus-4-20250514',
  'claude-sonnet-4-5': 'claude-sonnet-4-5-20250929',
  'claude-sonnet-4-0': 'claude-sonnet-4-20250514',
  'claude-sonnet-4': 'claude-sonnet-4-20250514',
  'claude-3-7-sonnet-latest': 'claude-3-7-sonnet-20250219',
  'claude-haiku-4-5': 'claude-haiku-4-5-20251001',
  'claude-3-5-haiku-latest': 'claude-3-5-haiku-20241022',
};

const DATED = /^(claude-.+)-(\d{8})$/;

/** True for an id already in the platform's own form. */
function platformShaped(platform: CloudPlatform, id: string): boolean {
  return platform === 'bedrock' ? /^(arn:|([a-z]+\.)?anthropic\.)/.test(id) : id.includes('@');
}

/** Bedrock's cross-region inference profile for a region: `eu-west-1` → `eu`, `ap-northeast-1` → `apac`, else `us`. */
export function bedrockGeo(region: string): string {
  if (region.startsWith('eu-')) return 'eu';
  if (region.startsWith('ap-')) return 'apac';
  return 'us';
}

/** The id to send to the platform for a Claude model id or alias. */
export function platformModel(platform: CloudPlatform, model: string, region = ''): string {
  if (platformShaped(platform, model)) return model;
  const claude = apiModel(model).model;
  const id = CLAUDE_MODELS[claude] ?? claude;
  if (platform === 'bedrock') return `${bedrockGeo(region)}.anthropic.${id}-v1:0`;
  const dated = DATED.exec(id);
  return dated ? `${dated[1]}@${dated[2]}` : id;
}

/** The Claude id a platform id stands for (what usage is priced by): the rule above backwards. */
export function claudeModel(model: string): string {
  const bedrock = /^(?:arn:.*\/)?(?:[a-z]+\.)?anthropic\.(claude-[^:]+?)(?:-v\d+(?::\d+)?)?$/.exec(model);
  if (bedrock) return bedrock[1];
  const vertex = /^(claude-.+)@(\d{8})$/.exec(model);
  if (vertex) return `${vertex[1]}-${vertex[2]}`;
  const claude = apiModel(model).model;
  return CLAUDE_MODELS[claude] ?? claude;
}
