import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

/** The state of a load: its data once there, the error of the last try, and whether one is under way. */
export type Loaded<T> = {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  /** Loads again now (after a change the page made). */
  reload: () => void;
};

/**
 * Runs `load` when `deps` change and, with `pollMs`, again every `pollMs` while the tab is visible (the
 * live updates of the checks page and of a running check session). A load still under way when the next
 * starts is aborted; data stays shown while reloading and after a failed poll.
 */
export function useLoad<T>(
  load: (signal: AbortSignal) => Promise<T>,
  deps: readonly unknown[],
  pollMs?: number,
): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<Error | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  useEffect(() => {
    const controller = new AbortController();
    setLoading(true);
    loadRef.current(controller.signal).then(
      (value) => {
        if (controller.signal.aborted) return;
        setData(value);
        setError(undefined);
        setLoading(false);
      },
      (err: unknown) => {
        if (controller.signal.aborted) return;
        setError(err instanceof Error ? err : new Error(String(err)));
        setLoading(false);
      },
    );
    return () => controller.abort();
  }, [...deps, tick]);

  useEffect(() => {
    if (!pollMs) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') setTick((t) => t + 1);
    }, pollMs);
    return () => clearInterval(timer);
  }, [pollMs]);

  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, reload };
}

/** Sets the document title: `<title> · Outpost`. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = title ? `${title} · Outpost` : 'Outpost';
  }, [title]);
}
