/**
 * Where keel.cjs lives, for the code that finds files beside it (`import.meta.url` in Keel's sources is bound to
 * `keelBundleUrl` in this build). Set again at start: code restored from a start-up snapshot would otherwise see
 * the path the snapshot was built at.
 */
import { pathToFileURL } from 'node:url';

let file = __filename;
export let keelBundleUrl = pathToFileURL(file).href;

export function setBundleFile(next: string): void {
  file = next;
  keelBundleUrl = pathToFileURL(next).href;
}

export const bundleFile = (): string => file;
