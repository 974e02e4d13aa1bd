/**
 * Ink decides once, when its module is first evaluated, whether it runs "in CI" (`CI` or `CONTINUOUS_INTEGRATION`
 * set to anything but `0`/`false`), and then draws nothing until the app exits. This UI runs only on a terminal
 * a person types into, whatever a container or dotfile exported, so Ink is loaded with those variables hidden.
 * They are put back as soon as the import settles: commands the model runs still see them.
 */
export const CI_MARKERS = ['CI', 'CONTINUOUS_INTEGRATION'] as const;

export async function importWithoutCiMarkers<T>(load: () => Promise<T>, env: NodeJS.ProcessEnv = process.env): Promise<T> {
  const hidden = new Map<string, string>();
  for (const name of CI_MARKERS) {
    const value = env[name];
    if (value === undefined) continue;
    hidden.set(name, value);
    delete env[name];
  }
  try {
    return await load();
  } finally {
    // Only what this function took away, and only if nothing set it meanwhile.
    for (const [name, value] of hidden) if (env[name] === undefined) env[name] = value;
  }
}
