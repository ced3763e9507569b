// Collection membership as SQL: the five system rules and the conditions of smart collections. Owned
// by reading (it decides what a collection holds) and the one part of it the gateway may import: it
// compiles the same rules over its read model (items as `i`, positions as `p`, ratings as `r`).
// Membership is computed when it is read, not published as events: it moves with every position,
// rating and catalog change, and with the clock (`recently-added`, `within_days`), for every user.
// No I/O here: kysely's `sql` only.
export * from './collection-rules';
export * from './system-rules';
