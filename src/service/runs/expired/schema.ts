import { Type } from '@sinclair/typebox';
import { Nullable, strict, Timestamp } from '../../platform/http/schema-helpers.js';

/** A run that ended without running, as `GET /v1/checks/{id}/expired-runs` answers it. */
export const ExpiredRunSchema = Type.Object(
  {
    id: Type.String({ description: 'The job id the run had' }),
    checkRunId: Nullable(Type.String({ description: 'The run (shared by a parallel run’s locations)' })),
    checkSessionId: Nullable(
      Type.String({ description: 'The session that started it; null when scheduled' }),
    ),
    runLocation: Type.String(),
    reason: Type.String({ description: 'Why it did not run: no connected agent serves the location, …' }),
    expiredAt: Timestamp,
  },
  strict,
);
