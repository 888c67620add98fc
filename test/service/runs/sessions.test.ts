import { describe, expect, it } from 'vitest';
import type { CheckDoc } from '../../../src/service/checks/checks.js';
import { matchesTarget } from '../../../src/service/runs/sessions/sessions.js';

const check = (over: Partial<CheckDoc> & Record<string, unknown>): CheckDoc =>
  ({ id: 'c1', checkType: 'ICMP', tags: [], groupId: null, ...over }) as unknown as CheckDoc;

describe('matchesTarget', () => {
  it('matches everything without filters', () => {
    expect(matchesTarget(check({}), {})).toBe(true);
  });

  it('combines filters with AND, values within one filter with OR', () => {
    const c = check({ id: 'a', checkType: 'TCP', tags: ['prod', 'db'], groupId: 7 });
    expect(matchesTarget(c, { checkId: ['a', 'b'], checkType: ['TCP'], groupId: [7, 8] })).toBe(true);
    expect(matchesTarget(c, { checkId: ['b'] })).toBe(false);
    expect(matchesTarget(c, { checkType: ['ICMP', 'DNS'] })).toBe(false);
    expect(matchesTarget(c, { groupId: [8] })).toBe(false);
    expect(matchesTarget(check({ groupId: null }), { groupId: [8] })).toBe(false);
  });

  it('needs every tag of `tags`, and every tag of some group of `matchTags`, honouring !negation', () => {
    const c = check({ tags: ['prod', 'db'] });
    expect(matchesTarget(c, { tags: ['prod', 'db'] })).toBe(true);
    expect(matchesTarget(c, { tags: ['prod', 'web'] })).toBe(false);
    expect(matchesTarget(c, { matchTags: [['web'], ['prod', '!skip']] })).toBe(true);
    expect(matchesTarget(c, { matchTags: [['prod', '!db']] })).toBe(false);
  });
});
