export { getOrganizationReport, RECENT_CASE_DAYS } from './org-report';
