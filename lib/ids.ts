import { uuidv7 } from 'uuidv7';

/** Time-ordered UUID v7: sortable by creation, safe to expose. */
export const newId = (): string => uuidv7();
