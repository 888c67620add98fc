import { LocationDetail } from './detail.js';
import { LocationList } from './list.js';
import './locations.css';

/**
 * Private locations (`/private-locations`) and one of them (`/private-locations/:locationId`): a private
 * location is a job queue of its own, served by agents run on the user's network with one of its keys.
 */
export default function PrivateLocationsPage({ locationId }: { locationId?: string }) {
  return locationId ? <LocationDetail id={locationId} /> : <LocationList />;
}
