export interface Backends {
    /** a server URL (any database on it) to create test databases from; null when none answers */
    postgresUrl: string | null;
    /** a NATS server with JetStream; null when none answers */
    natsUrl: string | null;
    describe: string;
}
export declare function resolveBackends(): Promise<Backends>;
/** A real NATS handshake over TCP: INFO (with JetStream on), CONNECT, PING → PONG. */
export declare function probeNats(url: string): Promise<void>;
/** A fresh, uniquely named database on the server at `baseUrl`; drop() removes it even with connections open. */
export declare function createTestDatabase(baseUrl: string): Promise<{
    url: string;
    drop(): Promise<void>;
}>;
/** A private nats-server with JetStream on a random port and its own store dir. */
export declare function startNatsServer(): Promise<{
    url: string;
    stop(): Promise<void>;
}>;
