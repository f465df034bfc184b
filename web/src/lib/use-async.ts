import { useCallback, useEffect, useRef, useState } from 'react';

export interface AsyncState<T> {
  data: T | undefined;
  error: unknown;
  /** True from the very render whose inputs changed until their answer arrives. */
  loading: boolean;
  reload(): void;
}

interface Settled<T> {
  inputs: readonly unknown[];
  data: T | undefined;
  error: unknown;
}

const sameInputs = (a: readonly unknown[], b: readonly unknown[]) => a.length === b.length && a.every((value, i) => Object.is(value, b[i]));

/**
 * Runs `load` whenever `deps` change (or on reload) and keeps the last good
 * data while a new load is in flight; answers of superseded loads are dropped.
 */
export function useAsync<T>(load: () => Promise<T>, deps: readonly unknown[]): AsyncState<T> {
  const [generation, setGeneration] = useState(0);
  const [settled, setSettled] = useState<Settled<T> | null>(null);
  const latest = useRef(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  const inputs = [...deps, generation];

  useEffect(() => {
    const ticket = ++latest.current;
    loadRef.current().then(
      (data) => {
        if (ticket === latest.current) setSettled({ inputs, data, error: null });
      },
      (error: unknown) => {
        if (ticket === latest.current) setSettled((previous) => ({ inputs, data: previous?.data, error }));
      },
    );
    // `inputs` is exactly what this effect depends on.
  }, inputs);

  const reload = useCallback(() => setGeneration((n) => n + 1), []);
  return {
    data: settled?.data,
    error: settled?.error ?? null,
    loading: settled === null || !sameInputs(settled.inputs, inputs),
    reload,
  };
}
