import { type ChildProcess } from 'node:child_process';
export declare const ROOT: string;
export type Mode = 'embedded' | 'distributed';
export interface Proc {
    child: ChildProcess;
    output(): string;
    /** SIGTERM and wait for exit */
    stop(signal?: NodeJS.Signals): Promise<number | null>;
    exited: Promise<number | null>;
}
export declare function spawnBindery(entry: 'main' | 'service', env: Record<string, string>, readyPattern: RegExp): Promise<{
    proc: Proc;
    match: RegExpMatchArray;
}>;
export interface Bindery {
    mode: Mode;
    url: string;
    /** stop every process and remove what the run created */
    stop(): Promise<void>;
    /** stop and start the processes again on the same data */
    restart(): Promise<void>;
    /** environment the processes run with (DATABASE_URL, NATS_URL, JWT_SECRET, DATA_DIR …) */
    env: Record<string, string>;
    procs: Proc[];
}
export declare function startBindery(mode: Mode, extraEnv?: Record<string, string>): Promise<Bindery>;
/**
 * The modes this machine can run: distributed only when Postgres answers (nats-server is started
 * privately). Under vitest, a test file that cannot run its distributed suites shows a skipped one
 * that says why, instead of leaving them out silently.
 */
export declare function availableModes(): Promise<Mode[]>;
