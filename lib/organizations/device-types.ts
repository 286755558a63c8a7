/** Kinds of device an organization registers (a plan caps how many): the column and the API read this list. */
export const DEVICE_TYPES = [
  'unknown',
  'android',
  'ios',
  'facebook_dump',
  'instagram_dump',
  'threads_dump',
  'email',
] as const;

export type DeviceType = (typeof DEVICE_TYPES)[number];
