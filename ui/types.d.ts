// Generated from the Rust types by ts-rs (src-tauri/src/types.rs). Do not edit:
// run `STOCKGUARD_WRITE_TYPES=1 cargo test -p stockguard-desktop types`.

export type EnvironmentKind = "production" | "staging" | "sandbox";

export type Role = "oncall" | "approver" | "facilitator" | "viewer";

export type SecretSlot = "mysql" | "mysql_replica" | "redis";

export type Profile = { environment: EnvironmentKind, 
/**
 * MySQL URL without a password, e.g. `mysql://app@db.internal:3306/sale`.
 */
mysql_url: string, 
/**
 * Optional read replica for heavy reads (reconciliation).
 */
mysql_replica_url?: string | null, 
/**
 * Redis URL without a password.
 */
redis_url: string, key_prefix: string, role: Role, 
/**
 * A read-only profile refuses every write action.
 */
read_only: boolean, 
/**
 * Which passwords of this profile are kept in the keychain.
 */
secrets?: Array<SecretSlot>, };

export type NamedProfile = { name: string, environment: EnvironmentKind, 
/**
 * MySQL URL without a password, e.g. `mysql://app@db.internal:3306/sale`.
 */
mysql_url: string, 
/**
 * Optional read replica for heavy reads (reconciliation).
 */
mysql_replica_url?: string | null, 
/**
 * Redis URL without a password.
 */
redis_url: string, key_prefix: string, role: Role, 
/**
 * A read-only profile refuses every write action.
 */
read_only: boolean, 
/**
 * Which passwords of this profile are kept in the keychain.
 */
secrets?: Array<SecretSlot>, };

export type ProfileForm = { name: string, environment: EnvironmentKind, mysql_url: string, mysql_replica_url: string | null, redis_url: string, key_prefix: string, role: Role, read_only: boolean, mysql_password: string | null, mysql_replica_password: string | null, redis_password: string | null, };

export type Probe = { mysql_version: string, mysql_ms: number, redis_ms: number, };

export type ConnectionInfo = { profile: string | null, environment: EnvironmentKind, role: Role, read_only: boolean, mysql: string, redis: string, key_prefix: string, has_replica: boolean, 
/**
 * Things the user should know about this connection (e.g. where a password came from).
 */
notices: Array<string>, };

export type DriftStatus = "OK" | "REDIS_HIGH" | "REDIS_LOW" | "KEY_MISSING" | "HISTORY_LOST" | "LEDGER_MISMATCH" | "OVERSOLD";

export type Reading = { product_id: number, name: string, initial_stock: number, db_stock: number, live_orders_qty: number, inflight_pending: number, pending_release: number, 
/**
 * Units of orders reserved after the Redis cut that were already in the DB when it was
 * read: the correction that makes the reading exact under traffic.
 */
reserved_after_cut: number, 
/**
 * `None` when the stock key is absent.
 */
redis_stock: number | null, expected_redis: number, 
/**
 * `None` when the stock key is absent.
 */
drift: number | null, status: DriftStatus, 
/**
 * The product's sequence number at the Redis cut.
 */
cut_seq: number, 
/**
 * The Redis epoch at the cut (0: none set; see the module docs).
 */
cut_epoch: number, 
/**
 * Redis went back in time (it has no record of reservations the DB holds): the cut
 * cannot be trusted and took no after-cut correction. The status says `HISTORY_LOST`
 * unless a DB-side incident outranks it.
 */
history_lost: boolean, 
/**
 * True when `live_orders_qty` comes from the last full reading's ledger gap rather than
 * from summing live orders now (see the module docs).
 */
live_derived: boolean, };

export type ConfirmedDrift = { product_id: number, status: DriftStatus, drift: number | null, };

export type Health = { 
/**
 * One `PING` round trip.
 */
redis_ms: number, 
/**
 * One `SELECT 1` round trip.
 */
db_ms: number, 
/**
 * Reservation messages not yet persisted (undelivered plus unacknowledged), all products.
 */
stream_backlog: number, 
/**
 * Units returned in the DB and not yet returned to Redis, all products (from the reading).
 */
pending_releases: number, 
/**
 * The sale's mode (the switch's global row; NORMAL when never set).
 */
engine_mode: Mode, 
/**
 * Product scopes in a mode other than NORMAL.
 */
products_off_normal: number, 
/**
 * Live engine instances, and how many of them applied the switch's newest revision.
 */
engines_live: number, engines_applied: number, };

export type BoardTick = { at: string, 
/**
 * Every product, most severe first.
 */
readings: Array<Reading>, 
/**
 * Drifts two consecutive readings agree on.
 */
confirmed: Array<ConfirmedDrift>, 
/**
 * How long the reading took.
 */
took_ms: number, 
/**
 * `None` when a server did not answer the health probe (`health_error` says why).
 */
health: Health | null, health_error: string | null, };

export type ChartLabels = { title: string, x_axis: string, y_axis: string, };

export type ServerKind = "MariaDb" | "MySql";

export type LedgerMismatch = { product_id: number, initial_stock: number, db_stock: number, live_orders_qty: number, 
/**
 * `initial_stock - db_stock - live_orders_qty`: what is missing from (negative: extra
 * in) the ledger.
 */
gap: number, oversold: boolean, };

export type LedgerReport = { server: ServerKind, products_checked: number, mismatches: Array<LedgerMismatch>, chunks: number, slowest_statement_ms: number, total_ms: number, 
/**
 * Seconds the replica was behind its source, when the check ran on a replica.
 */
replica_lag_secs: number | null, };

export type LedgerProgress = { done: number, total: number, };

export type Outcome = "APPLIED" | "REBUILT" | "NOOP" | "DRY_RUN" | "REFUSED_FENCE" | "LOCK_BUSY" | "FAILED";

export type RewriteResult = { product_id: number, 
/**
 * The reading the rewrite acted on (or would have).
 */
reading: Reading | null, before: number | null, after: number | null, delta: number, drift_after: number | null, 
/**
 * The fencing token (rewrite run id); 0 when the lock was busy and no run started.
 */
fence_token: number, audit_id: number, outcome: Outcome, };

export type RewriteItem = { product_id: number, result: RewriteResult | null, error: DesktopError | null, };

export type AuditFilter = { 
/**
 * Exact action, e.g. `rewrite` or `rewrite.dry_run`.
 */
action: string | null, 
/**
 * Exact outcome, e.g. `APPLIED`.
 */
outcome: string | null, 
/**
 * Part of the target, actor or reason (e.g. `1016`).
 */
text: string | null, 
/**
 * At most this many rows (capped at 1,000).
 */
limit: number | null, };

export type JsonValue = number | string | boolean | Array<JsonValue> | { [key in string]: JsonValue } | null;

export type AuditRecord = { id: number, at: string, actor: string, role: string, environment: string, action: string, target: string, reason: string, outcome: string, details: JsonValue | null, };

export type Mode = "NORMAL" | "DEGRADED" | "PAUSED";

export type Scope = string;

export type ScopeState = { scope: Scope, mode: Mode, revision: number, changed_by: string, reason: string, changed_at: string, };

export type Change = { revision: number, scope: Scope, mode: Mode, changed_by: string, reason: string, changed_at: string, audit_id: number, };

export type InstanceAck = { instance_id: string, listen_addr: string, 
/**
 * Milliseconds since its last heartbeat.
 */
heartbeat_age_ms: number, 
/**
 * False when the heartbeat is stale: shown, not counted.
 */
live: boolean, applied_revision: number, applied: boolean, effective_mode: Mode, breaker_state: string, breaker_reason: string | null, 
/**
 * Change to application, for an instance that applied exactly this revision (an
 * instance already on a newer one applied this one no later than that, not measured).
 */
propagation_ms: number | null, };

export type Acknowledgement = { revision: number, changed_at: string | null, live: number, applied: number, 
/**
 * Every live instance applied it (and there is at least one).
 */
complete: boolean, 
/**
 * The slowest measured live instance.
 */
propagation_ms: number | null, instances: Array<InstanceAck>, };

export type SwitchStatus = { 
/**
 * Every scope ever set, global first.
 */
scopes: Array<ScopeState>, 
/**
 * Where the instances stand on the newest revision.
 */
ack: Acknowledgement, };

export type Toggled = { change: Change, ack: Acknowledgement, };

export type ExitStep = { "step": "checked", products: number, live_instances: number, } | { "step": "paused", revision: number, ack: Acknowledgement, } | { "step": "drained", inflight_left: number, } | { "step": "rebuilt", product_id: number, buyers: number, outcome: Outcome, delta: number, } | { "step": "resumed", revision: number, ack: Acknowledgement, } | { "step": "verified", products: number, drifting: Array<number>, };

export type ExitReport = { scope: Scope, pause_revision: number, normal_revision: number, 
/**
 * From the pause being written to every instance having applied NORMAL.
 */
paused_ms: number, rewrites: Array<RewriteResult>, buyers_rebuilt: number, resume: Acknowledgement, 
/**
 * Live instances that applied NORMAL but are not back on Redis (their breaker has not
 * seen Redis healthy yet); they hold sales (PAUSED) rather than sell through the DB.
 */
not_back_on_redis: Array<string>, audit_id: number, };

export type ErrorKind = "profile" | "keychain" | "connect" | "not_connected" | "query" | "refused" | "confirmation_required" | "invalid" | "chart";

export type DesktopError = { kind: ErrorKind, message: string, };
