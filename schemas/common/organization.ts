import * as z from 'zod/mini';
import { ROLES_BY_RANK } from '../../lib/organizations/roles';
import { DateTime, Id } from './fields';

export const OrganizationRoleEnum = z.enum(ROLES_BY_RANK);

export const OrganizationEntity = z
  .object({
    id: Id,
    name: z.string(),
    slug: z.string(),
    email: z.string(),
    contact: z.string(),
    city: z.string(),
    state: z.string(),
    country: z.string(),
    description: z.string(),
    phone: z.array(z.string()),
    logo: z.nullable(z.string()),
    isActive: z.boolean(),
    isPriority: z.boolean(),
    activePlan: z.nullable(z.record(z.string(), z.unknown())),
    metadata: z.record(z.string(), z.unknown()),
    type: z.string(),
    version: z.enum(['v1', 'v2', 'eu', 'ca']),
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .register(z.globalRegistry, { id: 'OrganizationEntity' });

export const BillingSummaryEntity = z
  .object({
    billingMode: z.enum(['free', 'pay_as_you_go']),
    onCaseBilling: z.boolean(),
    tier: z.nullable(z.string()),
    cadence: z.nullable(z.enum(['monthly', 'annual'])),
    hasPaymentMethod: z.boolean(),
    delinquent: z.boolean(),
  })
  .register(z.globalRegistry, { id: 'BillingSummaryEntity' });

export const OrganizationDetailsResponseEntity = z
  .object({
    organization: OrganizationEntity,
    permission: z.object({ role: OrganizationRoleEnum }),
    billing: z.nullable(BillingSummaryEntity),
  })
  .register(z.globalRegistry, { id: 'OrganizationDetailsResponseEntity' });
