import { listSessions } from '../../lib/auth';
import { endpoint } from '../../lib/http/endpoint';
import { SessionList } from '../../schemas/auth/sessions';
import * as routes from '../routes';

/** GET /auth/sessions (extension): the caller's sign-in sessions and legacy tokens, newest first, never a token value. */
export const handler = endpoint(routes.listSessions, { response: SessionList }, ({ actor }) => listSessions({ actor }));
