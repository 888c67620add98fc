import './incidents.css';
import { IncidentList } from './list.js';
import { IncidentDetail } from './detail.js';

/**
 * Incidents (`/incidents`) and one of them with every update (`/incidents/:incidentId`): what went wrong on
 * which status-page services, told to the pages' visitors as a series of updates.
 */
export default function IncidentsPage({ incidentId }: { incidentId?: string }) {
  return incidentId ? <IncidentDetail id={incidentId} /> : <IncidentList />;
}
