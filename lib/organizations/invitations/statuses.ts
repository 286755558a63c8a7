/** An invitation's life: pending until accepted or rejected (the column and the API read this list). */
export const INVITATION_STATUSES = ['pending', 'accepted', 'rejected'] as const;

export type InvitationStatus = (typeof INVITATION_STATUSES)[number];
