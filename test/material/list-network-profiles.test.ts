import { routes } from '../../functions/routes';
import { describeProfileList } from '../harness/profile-lists';

describeProfileList(routes.listNetworkProfiles, {
  platform: 'professional_network',
  other: 'chat_platform',
  names: { first: 'Ann Lee', second: 'Bob Roe' },
});
