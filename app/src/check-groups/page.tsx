import { GroupDetail } from './detail.js';
import { GroupList } from './list.js';
import './check-groups.css';

/**
 * Check groups (`/check-groups`) and one of them with its checks (`/check-groups/:groupId`): a group lends
 * its checks defaults (tags, locations, muting) and runs them together.
 */
export default function CheckGroupsPage({ groupId }: { groupId?: string }) {
  return groupId ? <GroupDetail id={groupId} /> : <GroupList />;
}
