// Three nats-servers with JetStream on loopback ports, as `infra/nats/nats-cluster.conf` runs them:
// the ports and environment of each node (the config reads its name, ports, store and routes from
// the environment). Used by the NATS cluster fault test and the fault drill.
import { join } from 'node:path';
import { ROOT } from './bindery';
import { freePort } from './ops';

export const NATS_SERVER = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';
export const NATS_CLUSTER_CONF = join(ROOT, 'infra/nats/nats-cluster.conf');

export interface ClusterNode {
  name: string;
  url: string;
  monitor: string;
  /** what the node's nats-server needs besides process.env */
  env: Record<string, string>;
}

/** Free ports for three nodes (client, monitor, route each), their stores under `dir`. */
export async function clusterNodes(dir: string): Promise<ClusterNode[]> {
  const ports = await Promise.all(Array.from({ length: 9 }, () => freePort()));
  const routes = [0, 1, 2].map((i) => `nats://127.0.0.1:${ports[6 + i]}`);
  return [0, 1, 2].map((i) => ({
    name: `n${i + 1}`,
    url: `nats://127.0.0.1:${ports[i]}`,
    monitor: `http://127.0.0.1:${ports[3 + i]}`,
    env: {
      NATS_NAME: `n${i + 1}`,
      NATS_PORT: String(ports[i]),
      NATS_HTTP: String(ports[3 + i]),
      NATS_ROUTE_PORT: String(ports[6 + i]),
      NATS_STORE: join(dir, `n${i + 1}`),
      NATS_ROUTE_1: routes[0]!,
      NATS_ROUTE_2: routes[1]!,
      NATS_ROUTE_3: routes[2]!,
    },
  }));
}
