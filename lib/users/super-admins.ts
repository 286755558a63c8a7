import { eq } from 'drizzle-orm';
import { db } from '../db/client';
import { users } from '../db/schema/users';
import { forgetCachedProfile } from './profile';

/** Grants or revokes super admin; only the admin CLI calls this, never the API. Returns false for an unknown email. */
export async function setSuperAdmin(email: string, isSuperAdmin: boolean): Promise<boolean> {
  const [user] = await db()
    .update(users)
    .set({ isSuperAdmin })
    .where(eq(users.email, email.trim().toLowerCase()))
    .returning({ id: users.id });
  if (user) forgetCachedProfile(user.id);
  return user !== undefined;
}
