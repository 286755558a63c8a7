export { createCaseTag } from './create-case-tag';
export { createOrganizationTag } from './create-organization-tag';
export { deleteCaseTag } from './delete-case-tag';
export { deleteOrganizationTag } from './delete-organization-tag';
export {
  OrganizationTagElsewhereError,
  SystemTagReadOnlyError,
  TagInactiveError,
  TagNameTakenError,
  TagNotFoundError,
} from './errors';
export { listCaseTags } from './list-case-tags';
export { listOrganizationTags } from './list-organization-tags';
export { tagEventMetadata } from './tag-events';
export { toReviewTag } from './tag-writes';
export { updateCaseTag } from './update-case-tag';
export { updateOrganizationTag } from './update-organization-tag';
