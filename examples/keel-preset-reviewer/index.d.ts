import type { Plugin, Preset } from 'keel';

/** The reviewer policy alone: read-level tools only, everything else refused, and the reviewer's brief. */
export declare const reviewer: () => Plugin;

/** The default agent, without the web tools, under the reviewer policy. */
declare const preset: Preset;
export default preset;
