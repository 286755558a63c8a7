import { endSession } from '../../lib/auth';
import { endpoint } from '../../lib/http/endpoint';
import { SessionIdPath } from '../../schemas/auth/sessions';
import * as routes from '../routes';

/** DELETE /auth/sessions/{id} (extension): ends one of the caller's sign-in sessions or legacy tokens; 204, 404 otherwise. */
export const handler = endpoint(routes.endSession, { path: SessionIdPath }, ({ path, actor }) =>
  endSession({ actor }, path),
);
