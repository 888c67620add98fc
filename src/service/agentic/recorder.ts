import type { ResultRecorder } from '../runs/index.js';
import { applyScriptChange } from './repairs.js';
import { AgenticQueries } from './store.js';

/**
 * The result recorder of AGENTIC checks: in the transaction that stores each result carrying an
 * `agenticCheckResult` of an AGENTIC check, records the run's model usage (`agentic_runs`, what
 * `GET /v1/agentic-usage` sums) and applies its `scriptChange` (applyScriptChange), so the result, its usage
 * and the script it stored commit together or not at all. Results of other types, and a part posted for a
 * check of another type, change nothing.
 */
export function agenticRecorder(): ResultRecorder {
  return async (tx, stored) => {
    const part = stored.result.agenticCheckResult;
    if (!part) return;
    const store = new AgenticQueries(tx);
    const state = await store.lockScript(stored.accountId, stored.checkId);
    if (state?.checkType !== 'AGENTIC') return;
    const usage = part.modelUsage;
    await store.insertRun({
      result_id: stored.resultId,
      account_id: stored.accountId,
      check_id: stored.checkId,
      mode: part.mode,
      model_calls: usage.calls,
      duration_ms: usage.durationMs,
      prompt_tokens: usage.promptTokens ?? 0,
      completion_tokens: usage.completionTokens ?? 0,
      created_at: stored.nowMs,
    });
    if (!part.scriptChange) return;
    const agent = (stored.result as { agent?: { id?: unknown } }).agent;
    await applyScriptChange(tx, {
      accountId: stored.accountId,
      checkId: stored.checkId,
      resultId: stored.resultId,
      agentId: typeof agent?.id === 'string' ? agent.id : null,
      change: part.scriptChange,
      nowMs: stored.nowMs,
    });
  };
}
