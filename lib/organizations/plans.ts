/** The plan every new organization starts on (DESIGN.md): 5 seats, 2 devices, 5 GiB, no base fee. */
export const FREE_PLAN = {
  type: 'free',
  seats: 5,
  devices: 2,
  storageBytes: 5 * 1024 ** 3,
} as const;
