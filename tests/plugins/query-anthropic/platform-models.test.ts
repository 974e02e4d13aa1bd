import { describe, expect, it } from 'vitest';
import { bedrockGeo, claudeModel, platformModel } from '../../../plugins/query-anthropic/platform-models.js';

describe('platform model ids', () => {
  it('maps Claude ids and aliases to Bedrock ids with the region’s inference profile', () => {
    expect(platformModel('bedrock', 'claude-sonnet-4-5', 'us-east-1')).toBe('us.anthropic.claude-sonnet-4-5-20250929-v1:0');
    // An alias goes through models.ts's one table first.
    expect(platformModel('bedrock', 'sonnet', 'us-east-1')).toBe('us.anthropic.claude-sonnet-5-5-v1:0');
    expect(platformModel('bedrock', 'claude-opus-4-1', 'eu-central-1')).toBe('eu.anthropic.claude-opus-4-1-20250805-v1:0');
    expect(platformModel('bedrock', 'claude-haiku-4-5-20251001', 'ap-northeast-1')).toBe('apac.anthropic.claude-haiku-4-5-20251001-v1:0');
    expect(bedrockGeo('ca-central-1')).toBe('us');
  });

  it('maps Claude ids and aliases to Vertex ids, a dated id by rule, an undated unknown one as it is', () => {
    expect(platformModel('vertex', 'claude-haiku-4-5')).toBe('claude-haiku-4-5@20251001');
    expect(platformModel('vertex', 'claude-sonnet-4-0')).toBe('claude-sonnet-4@20250514');
    expect(platformModel('vertex', 'claude-sonnet-9-1-20300101')).toBe('claude-sonnet-9-1@20300101');
    expect(platformModel('vertex', 'claude-sonnet-5-5')).toBe('claude-sonnet-5-5');
  });

  it('sends an id already in the platform’s form unchanged', () => {
    for (const id of ['anthropic.claude-3-haiku-20240307-v1:0', 'global.anthropic.claude-sonnet-4-5-20250929-v1:0', 'arn:aws:bedrock:us-east-1:123:inference-profile/x']) {
      expect(platformModel('bedrock', id, 'eu-west-1')).toBe(id);
    }
    expect(platformModel('vertex', 'claude-opus-4@20250514')).toBe('claude-opus-4@20250514');
  });

  it('reads the Claude id back from a platform id, so usage is priced by it', () => {
    expect(claudeModel('us.anthropic.claude-sonnet-4-5-20250929-v1:0')).toBe('claude-sonnet-4-5-20250929');
    expect(claudeModel('anthropic.claude-3-haiku-20240307-v1:0')).toBe('claude-3-haiku-20240307');
    expect(claudeModel('claude-opus-4-1@20250805')).toBe('claude-opus-4-1-20250805');
    expect(claudeModel('claude-opus-4-5')).toBe('claude-opus-4-5-20251101');
    expect(claudeModel('claude-sonnet-5-5')).toBe('claude-sonnet-5-5');
  });
});
