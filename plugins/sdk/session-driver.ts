/** Where a session's protocol driver is kept (`session.data`): the `askUser` tap finds it there. */
import type { Session } from '../../kernel/index.js';
import type { ProtocolDriver } from './driver.js';

export const DRIVER_KEY = 'sdk';

/** The driver serving a session, for the `askUser` tap. */
export function driverOf(session: Session): ProtocolDriver | undefined {
  return session.data.get(DRIVER_KEY) as ProtocolDriver | undefined;
}
