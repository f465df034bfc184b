// With GATEWAY_WORKERS > 1 the workers share one port, so a scrape of
// /metrics lands on any one of them. That worker asks the primary, which
// collects every worker's registry over the cluster IPC channel and sums
// them (prom-client's AggregatorRegistry.aggregate: counters and histogram
// buckets add up), so one scrape sees the whole process group, as it would a
// single process. A worker that does not answer in time is left out.
import cluster from 'node:cluster';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue, type Registry } from 'prom-client';

type Snapshot = MetricObjectWithValues<MetricValue<string>>[];

type Message =
  | { type: 'gateway:metrics:ask'; id: number }
  | { type: 'gateway:metrics:collect'; id: number }
  | { type: 'gateway:metrics:snapshot'; id: number; metrics: Snapshot }
  | { type: 'gateway:metrics:answer'; id: number; text: string };

const TIMEOUT_MS = 2_000;

function isMessage(value: unknown): value is Message {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string' && (value as { type: string }).type.startsWith('gateway:metrics:');
}

/** In the primary: answers each worker's request for the cluster-wide metrics text. */
export function serveClusterMetrics(): void {
  let serial = 0;
  const collecting = new Map<number, { snapshots: Snapshot[]; add(snapshot: Snapshot): void }>();

  const collect = (): Promise<string> => {
    const id = ++serial;
    const workers = Object.values(cluster.workers ?? {}).filter((w) => w?.isConnected());
    return new Promise((resolve) => {
      const snapshots: Snapshot[] = [];
      const finish = (): void => {
        clearTimeout(timer);
        collecting.delete(id);
        void AggregatorRegistry.aggregate(snapshots)
          .metrics()
          .then(resolve, () => resolve(''));
      };
      const timer = setTimeout(finish, TIMEOUT_MS);
      collecting.set(id, {
        snapshots,
        add(snapshot) {
          snapshots.push(snapshot);
          if (snapshots.length >= workers.length) finish();
        },
      });
      if (workers.length === 0) finish();
      for (const worker of workers) worker!.send({ type: 'gateway:metrics:collect', id } satisfies Message);
    });
  };

  cluster.on('message', (worker, message: unknown) => {
    if (!isMessage(message)) return;
    if (message.type === 'gateway:metrics:ask') {
      void collect().then((text) => {
        if (worker.isConnected()) worker.send({ type: 'gateway:metrics:answer', id: message.id, text } satisfies Message);
      });
    } else if (message.type === 'gateway:metrics:snapshot') {
      collecting.get(message.id)?.add(message.metrics);
    }
  });
}

/**
 * In a worker: answers the primary's collection requests with this worker's
 * registry, and returns the function /metrics calls for the aggregated text.
 */
export function clusterMetricsSource(registry: Registry): () => Promise<string> {
  let serial = 0;
  const waiting = new Map<number, (text: string) => void>();
  const send = (message: Message): void => {
    if (process.connected) process.send?.(message);
  };
  process.on('message', (message: unknown) => {
    if (!isMessage(message)) return;
    if (message.type === 'gateway:metrics:collect') {
      void registry.getMetricsAsJSON().then((metrics) => send({ type: 'gateway:metrics:snapshot', id: message.id, metrics }));
    } else if (message.type === 'gateway:metrics:answer') {
      waiting.get(message.id)?.(message.text);
    }
  });
  return () =>
    new Promise((resolve) => {
      const id = ++serial;
      // The primary gone or slow: this worker's own metrics are better than none.
      const timer = setTimeout(() => {
        waiting.delete(id);
        void registry.metrics().then(resolve, () => resolve(''));
      }, TIMEOUT_MS + 500);
      waiting.set(id, (text) => {
        clearTimeout(timer);
        waiting.delete(id);
        resolve(text);
      });
      send({ type: 'gateway:metrics:ask', id });
    });
}
