// Generated from the Rust types by ts-rs (src-tauri/src/types.rs). Do not edit:
// run `STOCKGUARD_WRITE_TYPES=1 cargo test -p stockguard-desktop types`.

export type EnvironmentKind = "production" | "staging" | "sandbox";

export type Role = "oncall" | "approver" | "facilitator" | "viewer" | "admin";

export type SecretSlot = "mysql" | "mysql_replica" | "redis" | "state";

export type Thresholds = { 
/**
 * Reservation messages waiting to be persisted, all products.
 */
backlog_messages: number, 
/**
 * Live engine instances with an open breaker.
 */
breakers_open: number, };

export type SslMode = "DISABLED" | "PREFERRED" | "REQUIRED" | "VERIFY_CA" | "VERIFY_IDENTITY";

export type CertFiles = { 
/**
 * The CA the server's certificate must chain to; the only one trusted.
 */
ca?: string | null, 
/**
 * Our certificate, for a server that asks for one (mutual TLS).
 */
cert?: string | null, 
/**
 * The key of [`cert`](Self::cert) (unencrypted).
 */
key?: string | null, };

export type MysqlTls = { ssl_mode?: SslMode | null, 
/**
 * The CA the server's certificate must chain to; the only one trusted.
 */
ca?: string | null, 
/**
 * Our certificate, for a server that asks for one (mutual TLS).
 */
cert?: string | null, 
/**
 * The key of [`cert`](Self::cert) (unencrypted).
 */
key?: string | null, };

export type Tls = { redis?: CertFiles, mysql?: MysqlTls, };

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
 * When the backlog and the engines' breakers alert (the console's alerts and tray).
 */
thresholds?: Thresholds, 
/**
 * The adapter file of a sale Stockguard did not build (docs/adapters/), as an absolute
 * path; `--adapter` and `STOCKGUARD_ADAPTER` take precedence.
 */
adapter?: string | null, 
/**
 * Stockguard's own database for an adapter sale (baselines, audit, acknowledgements),
 * without a password (the `state` slot); `--state-url` and `STOCKGUARD_STATE_URL` take
 * precedence.
 */
state_url?: string | null, 
/**
 * TLS to the servers: a pinned CA and client certificates ([`tls`]).
 */
tls?: Tls, 
/**
 * Which passwords of this profile are kept in the keychain.
 */
secrets?: Array<SecretSlot>, 
/**
 * Which passwords of this profile are read from their environment variable
 * ([`SecretSlot::env_var`]) at each connection and never stored: on a machine without a
 * keychain, or by choice (`profile add --password-from-env SLOT`).
 */
passwords_from_env?: Array<SecretSlot>, };

export type Notice = { "code": "sandbox_by_default" } | { "code": "overridden_is_production", overrides: Array<string>, profile: string, label: EnvironmentKind, } | { "code": "password_from_environment", reason: string, slot: SecretSlot, env_var: string, };

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
 * When the backlog and the engines' breakers alert (the console's alerts and tray).
 */
thresholds?: Thresholds, 
/**
 * The adapter file of a sale Stockguard did not build (docs/adapters/), as an absolute
 * path; `--adapter` and `STOCKGUARD_ADAPTER` take precedence.
 */
adapter?: string | null, 
/**
 * Stockguard's own database for an adapter sale (baselines, audit, acknowledgements),
 * without a password (the `state` slot); `--state-url` and `STOCKGUARD_STATE_URL` take
 * precedence.
 */
state_url?: string | null, 
/**
 * TLS to the servers: a pinned CA and client certificates ([`tls`]).
 */
tls?: Tls, 
/**
 * Which passwords of this profile are kept in the keychain.
 */
secrets?: Array<SecretSlot>, 
/**
 * Which passwords of this profile are read from their environment variable
 * ([`SecretSlot::env_var`]) at each connection and never stored: on a machine without a
 * keychain, or by choice (`profile add --password-from-env SLOT`).
 */
passwords_from_env?: Array<SecretSlot>, };

export type EnvPassword = { slot: SecretSlot, env_var: string, };

export type SavedPasswords = { 
/**
 * Why no keychain could be used here (`None`: there is one).
 */
no_keychain: string | null, 
/**
 * The slots read from their environment variable at each connection, with the variable.
 */
from_env: Array<EnvPassword>, };

export type ProfileForm = { name: string, environment: EnvironmentKind | null, mysql_url: string, mysql_replica_url: string | null, redis_url: string, key_prefix: string, role: Role, read_only: boolean, thresholds: Thresholds, mysql_password: string | null, mysql_replica_password: string | null, redis_password: string | null, 
/**
 * The TLS files and MySQL's mode, as the CLI's `--redis-ca`.. flags take them.
 */
tls: Tls, };

export type ProfileSaved = { profiles: Array<NamedProfile>, passwords: SavedPasswords, };

export type Transport = { 
/**
 * The `ssl-mode` MySQL was asked for (`None`: no MySQL connection).
 */
mysql_mode: SslMode | null, 
/**
 * The session's protocol and cipher, e.g. `TLSv1.3 TLS_AES_256_GCM_SHA384` (`None`: not
 * encrypted).
 */
mysql_tls: string | null, 
/**
 * Whether MySQL was shown a client certificate.
 */
mysql_client_cert: boolean, 
/**
 * Whether Redis is spoken over TLS (`rediss://`; `false` too without a Redis).
 */
redis_tls: boolean, 
/**
 * Whether only the profile's CA is trusted for Redis (else the system's roots).
 */
redis_ca_pinned: boolean, 
/**
 * Whether Redis was shown a client certificate.
 */
redis_client_cert: boolean, 
/**
 * Whether there is a Redis connection at all.
 */
has_redis: boolean, };

export type Probe = { mysql_version: string, mysql_ms: number, redis_ms: number, 
/**
 * What the connection used (TLS mode, cipher), as `profile show` says it.
 */
transport: Transport, 
/**
 * The same, in one line.
 */
transport_line: string, };

export type ConnectionInfo = { profile: string | null, environment: EnvironmentKind, role: Role, read_only: boolean, mysql: string, redis: string, key_prefix: string, has_replica: boolean, 
/**
 * The sale's name when it is read over its adapter file (a sale Stockguard did not build).
 */
adapter_sale: string | null, 
/**
 * Things the user should know about this connection (e.g. where a password came from).
 */
notices: Array<Notice>, };

export type InitialField = { "from": "column", column: string, } | { "from": "baseline" } | { "from": "fixed", units: number, };

export type StockFields = { table: string, product: string, 
/**
 * The units left.
 */
remaining: string, 
/**
 * Units held by unpaid orders (two-phase lock).
 */
reserved: string | null, initial: InitialField, 
/**
 * A display name column.
 */
name: string | null, };

export type JoinFields = { table: string, on: string, key: string, };

export type StatusMeaning = "live" | "reserving" | "released";

export type StatusRow = { value: string, orders: number, meaning: StatusMeaning, };

export type OrdersFields = { table: string, product: string, 
/**
 * The column of an order's units; `None`: one unit per order.
 */
quantity_column: string | null, status: string, 
/**
 * Each status found, with its orders counted, and what it means.
 */
statuses: Array<StatusRow>, order_id: string | null, created: string | null, user: string | null, 
/**
 * The parent order holding the status, created and user columns.
 */
join: JoinFields | null, };

export type RedisStockFields = { "form": "counter", template: string, clamp: boolean, } | { "form": "hash", key: string, total: string, sold: string, } | { "form": "buckets", key: string, count: string, };

export type RedisFields = { stock: RedisStockFields, 
/**
 * A set of buyers per product, read for information.
 */
buyers: string | null, };

export type InflightFields = { "source": "none" } | { "source": "redis_stream", stream: string, group: string, product_field: string, order_id_field: string | null, } | { "source": "rabbitmq", url: string, queue: string, product_field: string | null, 
/**
 * The management API, to see what consumers hold (`None`: no drift is a verdict
 * while the queue has consumers).
 */
management_url: string | null, };

export type ProposalForm = { 
/**
 * The sale's name in the state database (baselines, audit).
 */
name: string, stock: StockFields | null, orders: OrdersFields | null, redis: RedisFields | null, inflight: InflightFields, };

export type Field = "name" | "stock_table" | "stock_product" | "stock_remaining" | "stock_reserved" | "stock_initial" | "stock_name" | "orders_table" | "orders_product" | "orders_quantity" | "orders_status" | "orders_statuses" | "orders_order_id" | "orders_created" | "orders_user" | "orders_join_table" | "orders_join_on" | "orders_join_key" | "redis_stock" | "redis_hash_total" | "redis_hash_sold" | "redis_bucket_count" | "redis_buyers" | "inflight_stream" | "inflight_group" | "inflight_product_field" | "inflight_order_id_field" | "inflight_url" | "inflight_queue" | "inflight_management_url" | "sale_db" | "sale_redis" | "whole";

export type Problem = "empty" | "not_a_name" | "no_placeholder" | "not_a_number" | "no_table" | "no_column" | "no_key" | "no_stream" | "no_group" | "no_queue" | "unreachable" | "no_products" | "no_live_status" | "rule";

export type FieldProblem = { field: Field, problem: Problem, name: string, detail: string, };

export type KeySample = { template: string, key: string, 
/**
 * The key's value as Redis prints it; `None` when the key does not exist.
 */
value: string | null, };

export type FormCheck = { 
/**
 * The form, its statuses counted again (a status found since is added, holding a unit).
 */
form: ProposalForm, 
/**
 * Empty when the form is an adapter file and everything it names exists.
 */
problems: Array<FieldProblem>, 
/**
 * A sampled key of each template, with its value.
 */
keys: Array<KeySample>, 
/**
 * The sale's products.
 */
products: number, 
/**
 * What waits in the in-flight source now.
 */
in_flight: number | null, };

export type AttachTarget = { mysql_url: string, mysql_password: string | null, 
/**
 * One server, or a cluster's seed nodes separated by commas.
 */
redis_url: string, redis_password: string | null, 
/**
 * The RabbitMQ the sale's queue is on, when it has one (as the file will name it).
 */
amqp_url: string | null, 
/**
 * Stockguard's own database for the sale (baselines, audit); blank: none.
 */
state_url: string | null, state_password: string | null, 
/**
 * Sample only keys matching this `SCAN` pattern (blank: every key).
 */
keys: string | null, };

export type AttachProfile = { name: string, 
/**
 * None until the person chooses: a default would be a guess.
 */
environment: EnvironmentKind | null, role: Role, };

export type Proposed = { check: FormCheck, undecided: Array<string>, keys_sampled: number, };

export type PreviewRow = { product_id: ProductId, 
/**
 * The display name, when the file names its column (empty otherwise).
 */
name: string, status: DriftStatus, initial_stock: number, 
/**
 * `column`, `number`, `baseline`, or `none` (recorded when the sale is attached).
 */
initial_source: string, db_stock: number, live_orders_qty: number, redis_stock: number | null, expected_redis: number, 
/**
 * `None` while the product is not settled.
 */
drift: number | null, in_flight: number, settled: boolean, };

export type Previewed = { check: FormCheck, readings: Array<PreviewRow>, };

export type Baseline = { product_id: ProductId, initial_stock: number, 
/**
 * The baseline it replaced, if any.
 */
previous: number | null, };

export type Attached = { profile: string, 
/**
 * The adapter file written, beside the profiles file.
 */
adapter: string, 
/**
 * The baselines recorded (none when the sale stores its initial stock).
 */
baselines: Array<Baseline>, 
/**
 * Where its passwords come from: the keychain, or (on a machine without one) the
 * environment variables named.
 */
passwords: SavedPasswords, };

export type Reason = { "reason": "mysql_privilege", account: string, privilege: string, table: string, } | { "reason": "grants_unknown", detail: string, } | { "reason": "redis_refused", user: string, command: string, detail: string, } | { "reason": "redis_who_unknown" } | { "reason": "redis_unknown", command: string, detail: string, };

export type Right = { allowed: boolean | null, 
/**
 * Why not (or why unknown); empty when allowed.
 */
reasons: Array<Reason>, };

export type Rights = { 
/**
 * `CURRENT_USER()`, e.g. `alice@%`.
 */
mysql_account: string, database: string, 
/**
 * `ACL WHOAMI`, when the user may ask.
 */
redis_user: string | null, 
/**
 * Readings, the board, the audit log.
 */
read: Right, 
/**
 * The fenced rewrite of Redis stock.
 */
rewrite: Right, 
/**
 * The degrade switch and its guided exit.
 */
degrade: Right, 
/**
 * Approving or rejecting a proposed plan (a step on the case).
 */
approve_compensation: Right, 
/**
 * Executing an approved plan: effects, outcomes, events, and the orders and stock they
 * change. (Whether this person may execute this case, the triggers decide.)
 */
execute_compensation: Right, run_drills: Right, 
/**
 * Acknowledging an alert (and closing acknowledgements whose alert cleared).
 */
acknowledge_alerts: Right, };

export type ProductId = number | string;

export type DriftStatus = "OK" | "UNSETTLED" | "REDIS_HIGH" | "REDIS_LOW" | "KEY_MISSING" | "KEY_UNREADABLE" | "HISTORY_LOST" | "LEDGER_MISMATCH" | "OVERSOLD";

export type Reading = { 
/**
 * A number for our own sale; over an adapter, the sale's own id (a number or text).
 */
product_id: ProductId, name: string, initial_stock: number, db_stock: number, live_orders_qty: number, inflight_pending: number, pending_release: number, 
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
 * `None` when the stock key is absent, or (over an adapter) while the product is
 * `UNSETTLED`.
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
live_derived: boolean, 
/**
 * True when the drift is a verdict. Our own reading is exact (always true); a reading
 * over an adapter is settled once two passes agree (`crate::adapter`).
 */
settled: boolean, 
/**
 * Orders accepted and not yet rows: our own reading's in-flight entries not yet in the DB;
 * over an adapter, what waits in its in-flight source for this product (or the whole
 * queue's depth when its messages name no product).
 */
in_flight: number, };

export type ConfirmedDrift = { product_id: ProductId, status: DriftStatus, drift: number | null, };

export type Guarantee = "none_opted_out" | "no_replicas" | "db_write_through" | "replica";

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
engines_live: number, engines_applied: number, 
/**
 * Live engine instances whose Redis breaker is not closed (they sell through the DB).
 */
breakers_open: Array<string>, 
/**
 * What an ACCEPTED answer survives on this sale: the weakest that its live engines'
 * heartbeats report (`None`: no live engine says).
 */
accepted_guarantee: Guarantee | null, 
/**
 * Live engines of the sale whose accepted orders a failover may lose (opted out).
 */
engines_may_lose_accepted: number, 
/**
 * What the console's connection uses (TLS mode and cipher); each door words it in its
 * language (its `Display` is the English line).
 */
transport: Transport, 
/**
 * The servers a production sale is reached in clear ("MySQL", "Redis"); empty when all
 * speak TLS, or the sale is not production.
 */
in_clear: Array<string>, };

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
 * The products a rewrite repairs (`rewrite::repairs`), most severe first: what the
 * rewrite form is filled with when nothing is picked. `None` over an adapter, whose sale
 * the window's rewrite refuses.
 */
repairable: Array<number> | null, 
/**
 * How long the reading took.
 */
took_ms: number, 
/**
 * `None` when a server did not answer the health probe (`health_error` says why).
 */
health: Health | null, health_error: string | null, 
/**
 * A sale read over its adapter: what only its reading has.
 */
adapter: AdapterBoard | null, };

export type AdapterBoard = { 
/**
 * The sale's name (its adapter file's `[sale] name`).
 */
sale: string, 
/**
 * False when the sale's in-flight source keeps nothing it carried (a RabbitMQ queue, a
 * table): lost orders cannot be known there.
 */
lost_knowable: boolean, 
/**
 * The products with orders accepted and never a row, each with the sale's order ids.
 */
lost: Array<LostOrders>, };

export type LostOrders = { product_id: ProductId, name: string, order_ids: Array<string>, };

export type AlertKind = "DRIFT_CONFIRMED" | "OVERSOLD" | "LEDGER_MISMATCH" | "KEY_MISSING" | "BACKLOG" | "BREAKER_OPEN";

export type Alert = { key: string, kind: AlertKind, 
/**
 * The product's id as the sale keeps it (a number, or over an adapter text).
 */
product_id: ProductId | null, 
/**
 * What the alert measures, by kind:
 * - `DRIFT_CONFIRMED`: the confirmed drift, Redis less what it should hold (on a lost
 *   history, what the untrusted cut shows);
 * - `OVERSOLD`: the units beyond stock, by whichever line the status crossed (live
 *   orders above initial stock, DB stock below zero), the larger of the two;
 * - `LEDGER_MISMATCH`: the ledger's gap, `initial - DB stock - live orders`
 *   ([`Reading::ledger_gap`], the figure recon's ledger gaps keep);
 * - `KEY_MISSING`: none (no key, or over an adapter one that holds no whole number; no figure);
 * - `BACKLOG`: the reservations waiting to be persisted;
 * - `BREAKER_OPEN`: the live engines whose breaker is open.
 */
value: number | null, };

export type AlertAcknowledgement = { id: number, alert_key: string, kind: string, product_id: ProductId | null, 
/**
 * The account that acknowledged (the server's word).
 */
acked_by: string, reason: string, acked_at: string, until_at: string | null, };

export type AlertState = { alert: Alert, 
/**
 * When it began firing: the first reading it was seen in, kept while it fires; once it
 * cleared, a new incident begins again (`Onsets`).
 */
since: string, acknowledged: AlertAcknowledgement | null, };

export type AlertsUpdate = { at: string, 
/**
 * Every firing alert, with its open acknowledgement if someone took it.
 */
alerts: Array<AlertState>, 
/**
 * Why the acknowledgements could not be read or settled (the alerts still show).
 */
error: string | null, };

export type OpenProduct = { 
/**
 * `None`: just the window (an alert about the whole sale).
 */
product_id: ProductId | null, };

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

export type AuditRecord = { id: number, at: string, 
/**
 * Who did it, as the server knows it: the account of the connection that wrote the row
 * (set by a trigger, whatever the client sent).
 */
actor: string, 
/**
 * Who the client said it was (the profile's actor name): a claim, kept beside the fact.
 */
claimed_actor: string, role: string, environment: string, action: string, target: string, reason: string, outcome: string, details: JsonValue | null, };

export type EventKind = "switch_change" | "guided_exit" | "rewrite" | "repair" | "alert_acknowledged" | "alert_ack_closed" | "compensation_step" | "drill_started" | "drill_fault" | "drill_verdict" | "audit";

export type RecordRef = { table: string, id: number, };

export type TimelineEvent = { 
/**
 * When, by the database's clock.
 */
at: string, kind: EventKind, 
/**
 * The product it concerns; none for the whole sale (a global switch change, a drill).
 */
product_id: ProductId | null, 
/**
 * Who: the server's word where the record keeps it (the audit row's account), else the
 * name the record keeps.
 */
actor: string, reason: string, 
/**
 * What came of it, in the record's own word (`DEGRADED`, `APPLIED`, `APPROVE`, `PASSED`).
 */
outcome: string, 
/**
 * The figures of the record, in a few words (scope and revision, before and after, fence).
 */
detail: string, record: RecordRef, 
/**
 * The audit row of the same action, where one is linked.
 */
audit_id: number | null, };

export type Timeline = { 
/**
 * The sale's name (an adapter sale's; empty for our own).
 */
sale: string, from: string, to: string, product: ProductId | null, events: Array<TimelineEvent>, 
/**
 * Older events of the window were left out to keep to the limit.
 */
truncated: boolean, };

export type Mode = "NORMAL" | "DEGRADED" | "PAUSED";

export type Scope = string;

export type ScopeState = { scope: Scope, mode: Mode, revision: number, changed_by: string, reason: string, changed_at: string, };

export type Change = { revision: number, scope: Scope, mode: Mode, changed_by: string, reason: string, changed_at: string, audit_id: number, };

export type InstanceAck = { instance_id: string, listen_addr: string, 
/**
 * The switch row of the products it sells: `global` (the sale's) or `rig:<run id>`.
 */
home: Scope, 
/**
 * Milliseconds since its last heartbeat.
 */
heartbeat_age_ms: number, 
/**
 * False when the heartbeat is stale: shown, not counted.
 */
live: boolean, applied_revision: number, applied: boolean, effective_mode: Mode, breaker_state: string, breaker_reason: string | null, 
/**
 * What its ACCEPTED answers survive, as its last heartbeat said (`None`: an engine that
 * does not say, or a word this console does not know).
 */
accepted_guarantee: Guarantee | null, 
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

export type ExitStep = { "step": "checked", products: number, live_instances: number, } | { "step": "paused", revision: number, ack: Acknowledgement, } | { "step": "drained", inflight_left: number, } | { "step": "rebuilt", product_id: number, buyers: number, outcome: Outcome, delta: number, } | { "step": "resumed", revision: number, ack: Acknowledgement, } | { "step": "verified", products: number, drifting: Array<ProductId>, };

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

export type RunStatus = "RUNNING" | "PASSED" | "FAILED" | "INCONCLUSIVE" | "ABORTED" | "HALTED" | "DEAD";

export type RunRecord = { id: number, scenario: string, started_by: string, runner: string | null, started_at: string, finished_at: string | null, status: RunStatus, 
/**
 * Its runner stopped without finishing: a running run whose heartbeat is stale, or a run
 * already ended `DEAD`.
 */
dead: boolean, 
/**
 * Seconds since the last heartbeat, by the database's clock.
 */
heartbeat_age_s: number | null, halt_requested_at: string | null, halt_reason: string | null, plan_hash: string | null, seed: number | null, };

export type RunDetail = { 
/**
 * The runner's parameters: the drill file's text, the variant, the rig's products.
 */
parameters: JsonValue, 
/**
 * Absent while the run is going, or when its runner died.
 */
summary: Summary | null, id: number, scenario: string, started_by: string, runner: string | null, started_at: string, finished_at: string | null, status: RunStatus, 
/**
 * Its runner stopped without finishing: a running run whose heartbeat is stale, or a run
 * already ended `DEAD`.
 */
dead: boolean, 
/**
 * Seconds since the last heartbeat, by the database's clock.
 */
heartbeat_age_s: number | null, halt_requested_at: string | null, halt_reason: string | null, plan_hash: string | null, seed: number | null, };

export type Figures = { sent: number, 
/**
 * Scheduled requests not sent because the generator fell more than a second behind.
 */
skipped: number, 
/**
 * Requests the schedule planned. A run that sent less than 90% of them proves too little
 * to pass (0 in a record written before it was kept).
 */
planned: number, accepted: number, 
/**
 * Units of live orders beyond initial stock at the worst tick and at the end: must be 0.
 */
oversold_units: number, 
/**
 * Accepted orders found neither in `orders` nor failed back after the drain deadline.
 */
lost: number, duplicated: number, 
/**
 * Accepted, then withdrawn (`order_failures`): allowed, and each needs compensation.
 */
failed_back: number, 
/**
 * Orders in the DB whose buyer heard an error, not "accepted" (the reply was lost with
 * a cut connection): the outcome was unknown to the buyer; an idempotent retry with the
 * same key would have returned the order.
 */
unannounced_orders: number, 
/**
 * Answers that were errors (not a sale's own "sold out" or "limit"), over all answers.
 */
buyer_error_rate: number, p50_ms: number, p99_ms: number, 
/**
 * From the first fault to every engine on the DB path.
 */
time_to_db_path_ms: number | null, 
/**
 * From the last fault's end to every engine back on Redis with drift 0.
 */
recovery_s: number | null, 
/**
 * The largest drift of a product seen at any tick, by absolute value.
 */
drift_peak: number, 
/**
 * The largest backlog seen, and how many times faster than orders arrived it was
 * caught up after its peak.
 */
backlog_peak: number, catch_up_multiple: number | null, 
/**
 * From the guided exit's switch change to every engine having applied it.
 */
switch_propagation_ms: number | null, 
/**
 * Stale writes a paused rewrite holder got through (lock-holder-pause): must be 0.
 */
stale_writes: number | null, 
/**
 * Ticks from the failover to drift REDIS_HIGH confirmed (redis-failover-loss).
 */
drift_confirmed_ticks: number | null, 
/**
 * Looks at accepted orders' status answered "not found" (must be 0: an accepted order
 * is PROCESSING until persisted).
 */
status_not_found: number | null, };

export type Check = { name: string, 
/**
 * `invariant` (always checked, failing it fails or aborts the run), `slo` (declared), or
 * `proof` (the run proved something: its faults took effect, its engines were back;
 * failing only these makes the run `INCONCLUSIVE`).
 */
kind: string, passed: boolean, 
/**
 * The figure measured, as shown.
 */
figure: string, 
/**
 * The bound it was held to, as shown.
 */
bound: string, };

export type AffectedOrder = { order_no: string, product_id: number, user_id: number, buy_count: number, 
/**
 * `OVERSOLD`, `FAILED` or `LOST` (accepted, then neither an order nor a failure).
 */
why: string, };

export type Summary = { figures: Figures, checks: Array<Check>, affected_orders: Array<AffectedOrder>, 
/**
 * The products the runner created for this run.
 */
products: Array<number>, 
/**
 * A hash of every request the load sent (who, what, when, where): equal for two runs
 * of the same file and seed.
 */
schedule_hash: string, 
/**
 * Why the run ended as it did (the abort, the halt, the failed checks).
 */
reason: string | null, 
/**
 * The run's parameters beyond the file (`--extra-latency-ms`, `--short`), as given.
 */
variant: string | null, };

export type LoadSecond = { sent: number, 
/**
 * Requests not sent because the generator was more than a second behind the schedule
 * (every connection busy with slow answers): not the buyers' errors, and not sent late
 * in a burst the schedule never had.
 */
skipped: number, accepted: number, 
/**
 * The sale's own answers that are not errors: sold out, per-buyer limit.
 */
refused: number, 
/**
 * Everything else, by kind (`timeout`, `connect`, `503`, `DEGRADED_BUSY`, ...).
 */
errors: { [key in string]: number }, p50_ms: number, p99_ms: number, };

export type TickFigures = { 
/**
 * Sum over the drill's products of Redis stock minus what it should be.
 */
drift: number, 
/**
 * The largest drift of one product, by absolute value.
 */
drift_max_abs: number, redis_stock: number, db_stock: number, inflight: number, 
/**
 * Reservation messages not yet persisted.
 */
backlog: number, 
/**
 * Units of live orders beyond initial stock (the oversell invariant).
 */
oversold_units: number, 
/**
 * Engines on the Redis path, on the DB path, unheard.
 */
redis_path: number, db_path: number, 
/**
 * Whether Redis could be read at all this tick (through the runner's own link).
 */
redis_reachable: boolean, 
/**
 * Products whose Redis went back in time (a failover to a lagging replica, a flush):
 * their reading cannot be corrected to the cut.
 */
history_lost: number, };

export type Event = { "kind": "phase", phase: string, } | { "kind": "fault_injected", fault: string, target: string, action: string, } | { "kind": "fault_restored", fault: string, } | { "kind": "mode", redis_path: number, db_path: number, unknown: number, } | { "kind": "repair", what: string, outcome: string, } | { "kind": "load" } & LoadSecond | { "kind": "tick" } & TickFigures | { "kind": "violation", invariant: string, figure: string, } | { "kind": "abort", reason: string, } | { "kind": "halt", reason: string, } | { "kind": "note", text: string, };

export type TimedEvent = { offset_ms: number, } & ({ "kind": "phase", phase: string, } | { "kind": "fault_injected", fault: string, target: string, action: string, } | { "kind": "fault_restored", fault: string, } | { "kind": "mode", redis_path: number, db_path: number, unknown: number, } | { "kind": "repair", what: string, outcome: string, } | { "kind": "load" } & LoadSecond | { "kind": "tick" } & TickFigures | { "kind": "violation", invariant: string, figure: string, } | { "kind": "abort", reason: string, } | { "kind": "halt", reason: string, } | { "kind": "note", text: string, });

export type Side = { id: number, scenario: string, status: string, plan_hash: string | null, schedule_hash: string | null, };

export type Row = { 
/**
 * The figure's field name in the summary (`p99_ms`, ...).
 */
figure: string, a: number | null, b: number | null, 
/**
 * `b - a`, when both were measured.
 */
diff: number | null, 
/**
 * `(b - a) / a`, when both were measured and `a` is not 0.
 */
change: number | null, must_be_zero: boolean, regressed: boolean, };

export type Comparison = { a: Side, b: Side, threshold: number, 
/**
 * Both runs recorded a drill-file hash, and the same one.
 */
same_plan: boolean, 
/**
 * Both runs recorded a request-schedule hash, and the same one.
 */
same_schedule: boolean, rows: Array<Row>, 
/**
 * The figures that regressed, in the order of the rows.
 */
regressions: Array<string>, };

export type Lang = "zh" | "en";

export type FaultWindow = { fault: string, 
/**
 * The fault's Chinese name in the drill file (`name_zh`), when it has one.
 */
fault_zh: string | null, target: string, action: string, start_s: number, end_s: number, 
/**
 * Never restored in the timeline: the window runs to its last event.
 */
open: boolean, 
/**
 * Taken from the drill file, the timeline holding no fault event.
 */
planned: boolean, 
/**
 * The plan's parameters of the fault (latency, bandwidth, engines), when it has any.
 */
detail: string, };

export type LoadPoint = { at_s: number, sent: number, accepted: number, refused: number, errors: number, p50_ms: number, p99_ms: number, };

export type TickPoint = { at_s: number, drift: number, drift_max_abs: number, backlog: number, inflight: number, };

export type ModePoint = { at_s: number, redis_path: number, db_path: number, };

export type Series = { load: Array<LoadPoint>, ticks: Array<TickPoint>, 
/**
 * From the timeline's mode events; from the ticks' path counts when it has none.
 */
mode: Array<ModePoint>, };

export type TimelineCharts = { 
/**
 * The x axis: from the earliest event (or the load's start) to the last, in seconds.
 */
span_s: [number, number], 
/**
 * In the order the faults began; a timeline without fault events shows the plan's.
 */
fault_windows: Array<FaultWindow>, series: Series, 
/**
 * Engines selling from Redis, as a count that holds until it changes, to the span's end.
 */
redis_path: Array<[number, number]>, 
/**
 * Engines selling through the DB, the same way.
 */
db_path: Array<[number, number]>, };

export type Refusal = { "kind": "production" } | { "kind": "staging_unconfirmed" } | { "kind": "read_only" } | { "kind": "role", role: Role, };

export type Started = { run_id: number, 
/**
 * The runner's process id, for the log.
 */
pid: number, 
/**
 * Where the runner's own output goes.
 */
log: string, };

export type DrillInfo = { name: string, title_en: string, title_zh: string, description: string, 
/**
 * `None` when the drill file has no Chinese description.
 */
description_zh: string | null, 
/**
 * Seconds of load at full length (the short form scales it).
 */
duration_s: number, 
/**
 * The fault steps' names, in timeline order.
 */
faults: Array<string>, 
/**
 * The same names in Chinese (a name without one repeats the English).
 */
faults_zh: Array<string>, };

export type DrillCatalog = { drills: Array<DrillInfo>, refusal: Refusal | null, staging: boolean, };

export type DrillTimeline = { run: RunDetail, timeline: Array<TimedEvent>, charts: TimelineCharts, };

export type DrillLive = { run: RunDetail, 
/**
 * The events written since the previous `drill-live` of this run (all of them in the
 * first), in the order they were written.
 */
events: Array<TimedEvent>, 
/**
 * The first of this run's: the window starts its timeline afresh.
 */
first: boolean, 
/**
 * The charts of every event of the run so far.
 */
charts: TimelineCharts, };

export type CaseStatus = "DRAFT" | "PROPOSED" | "APPROVED" | "EXECUTING" | "EXECUTED" | "CLOSED";

export type LineReason = "OVERSOLD" | "WITHDRAWN";

export type Action = "FULFIL" | "CANCEL_REFUND" | "COUPON" | "NOTE";

export type LineOutcome = "PENDING" | "DONE" | "SKIPPED";

export type Line = { order_no: string, user_id: number, qty: number, 
/**
 * When the DB accepted the order (`orders.created_at`, or the failure's time).
 */
accepted_at: string, 
/**
 * The unit price the order was sold at (`orders.price_cents`, set by the server).
 */
price_cents: number, reason: LineReason, action: Action | null, amount_cents: number, note: string, outcome: LineOutcome, outcome_detail: string, executed_by: string | null, 
/**
 * Over an adapter: who recorded the order as read from the sale, when it is not the case's
 * opener (a colleague's row the opening matched: a checker asks them). `None` on our own sale.
 */
read_by: string | null, 
/**
 * Why an oversold line of our own sale is in the case: its first unit's place among the
 * units sold, in acceptance order (the live orders' and this case's, accepted before it,
 * plus one). Beyond [`Case::initial_stock`], it is a unit the sale never had. `None` over an
 * adapter and for a withdrawn acceptance.
 */
sold_from: number | null, };

export type Step = { step: string, actor: string, reason: string, at: string, };

export type Case = { id: number, 
/**
 * The product as the sale keys it (a number; over an adapter keyed by text, a string).
 */
product_id: ProductId, status: CaseStatus, oversold_units: number, withdrawn_units: number, opened_by: string, opened_at: string, maker: string | null, approvals_needed: number, 
/**
 * Above this total a proposal needs two checkers (`compensation_settings`; `None`: the row
 * is missing, and every proposal needs two).
 */
two_checkers_above_cents: number | null, 
/**
 * Distinct checkers who approved the current proposal.
 */
approvals: Array<string>, 
/**
 * The units the product had on sale (`inventory.initial_stock`); `None` over an adapter.
 */
initial_stock: number | null, 
/**
 * The plan's total (sum of the lines' amounts).
 */
total_cents: number, lines: Array<Line>, steps: Array<Step>, };

export type CaseSummary = { id: number, 
/**
 * The product as the sale keys it (a number; over an adapter keyed by text, a string).
 */
product_id: ProductId, status: CaseStatus, lines: number, total_cents: number, opened_at: string, 
/**
 * Seconds since it was opened.
 */
age_s: number, maker: string | null, };

export type Opened = { case_id: number, 
/**
 * False: the product's open case was found and returned.
 */
created: boolean, lines_added: number, 
/**
 * Affected orders not added because the open case is past its draft (its plan is under
 * approval or done): they join a case opened after it closes.
 */
waiting: number, };

export type Planned = { lines_changed: number, total_cents: number, };

export type StepKind = "PROPOSE" | "APPROVE" | "REJECT" | "CLOSE" | "NOTE";

export type Stepped = { case_id: number, actor: string, status: CaseStatus, approvals_needed: number, approvals: number, };

export type LineRun = { "result": "done", order_no: string, detail: string, } | { "result": "skipped", order_no: string, detail: string, } | { "result": "already_done", order_no: string, } | { "result": "unknown", order_no: string, error: string, };

export type Execution = { lines: Array<LineRun>, after: Stepped, };

export type CompensationProgress = { case_id: number, done: number, total: number, order_no: string, };

export type EngineAnswer = "answered" | "not_answering" | "stale";

export type SaleFigures = { products: number, initial_units: number, 
/**
 * Units the DB's stock still holds.
 */
remaining_units: number, 
/**
 * `initial - remaining`: units sold per the ledger (persisted orders not returned).
 */
sold_units: number, sold_pct: number, };

export type OrderFigures = { requests: number, accepted: number, sold_out: number, 
/**
 * The engine could not serve the order (`UNAVAILABLE`): what a buyer sees as a 5xx other
 * than "not ready" or "paused" (the load generator's "errors", less its transport errors).
 */
errors: number, 
/**
 * Every other answer: over the per-user limit, rate-limited, not ready, paused, bad request.
 */
refused: number, 
/**
 * Every answer code with its count.
 */
by_outcome: { [key in string]: number }, 
/**
 * Seconds between this scrape and the previous one; none for a first scrape.
 */
window_s: number | null, orders_per_s: number | null, accepted_per_s: number | null, 
/**
 * p99 of `POST /orders` over the window (none without orders in it).
 */
p99_ms: number | null, 
/**
 * p99 since the engines started.
 */
p99_total_ms: number | null, 
/**
 * Reservations not yet persisted (the engines' sale-wide gauge); none when no engine
 * answered.
 */
backlog: number | null, inflight_units: number | null, };

export type EngineFigures = { instance_id: string, listen_addr: string, answer: EngineAnswer, 
/**
 * Why a live engine did not answer.
 */
error: string | null, heartbeat_age_ms: number, breaker_state: string, requests: number | null, orders_per_s: number | null, };

export type Overview = { at: string, 
/**
 * The first line: is the sale safe ([`verdict`]).
 */
verdict: Verdict, sale: SaleFigures, orders: OrderFigures, engines: Array<EngineFigures>, 
/**
 * The sale's mode: the degrade switch's global row (NORMAL when never set).
 */
mode: Mode, 
/**
 * Products whose own scope is not NORMAL.
 */
products_off_normal: number, 
/**
 * The firing alerts with their acknowledgements, as the caller evaluated them.
 */
alerts: Array<AlertState>, 
/**
 * Cases not executed or closed, newest first.
 */
compensation_open: Array<CaseSummary>, 
/**
 * The sale's name when it is read over its adapter ([`over_adapter`]): then what only
 * our engines know (answers other than an order, p99, backlog, the mode) is not there.
 */
over_adapter: string | null, };

export type Verdict = { level: Level, 
/**
 * Products sold beyond their stock.
 */
oversold: number, 
/**
 * Products whose ledger (DB stock against its orders) does not add up.
 */
ledger_mismatch: number, 
/**
 * Products whose Redis stock drifts (confirmed) or whose key is missing.
 */
drifting: number, 
/**
 * Sale-wide alerts: the backlog, open breakers.
 */
other: number, 
/**
 * Firing alerts nobody acknowledged.
 */
unacknowledged: number, };

export type Level = "unsafe" | "watch" | "exact";

export type BurnDownView = { svg: string, product_id: number | null, initial_units: number, 
/**
 * Units left at the end of the curve (initial less live orders).
 */
remaining_units: number, bucket_secs: number, points: number, };

export type ErrorKind = "profile" | "keychain" | "connect" | "not_connected" | "query" | "refused" | "confirmation_required" | "invalid" | "chart" | "runner";

export type MessageCode = "other" | "not_connected" | "no_product_picked" | "reason_required" | "notes_required" | "confirm_product" | "confirm_scope" | "confirm_case" | "refused_read_only" | "refused_role" | "drill_refused_production" | "drill_refused_staging" | "unknown_profile" | "no_profile" | "invalid_profile_name" | "choose_environment" | "malformed_url" | "password_in_url" | "invalid_key_prefix" | "profiles_file" | "no_config_dir" | "no_keychain" | "missing_secret" | "password_not_in_environment" | "keychain_failed" | "mysql_unreachable" | "mysql_access_denied" | "mysql_unknown_database" | "redis_unreachable" | "connect_failed" | "query_failed" | "exit_redis_unreachable" | "instances_cannot_reach_redis" | "not_acknowledged" | "not_drained" | "rewrite_not_clean" | "changed_meanwhile" | "drift_after_exit" | "exit_failed" | "switch_read_timed_out" | "no_such_run" | "run_finished" | "drill_running" | "drill_starting" | "bad_short" | "bad_threshold" | "drill_plan" | "runner_missing" | "runner_failed" | "no_such_case" | "no_such_product" | "nothing_to_compensate" | "choose_compensation" | "bad_plan" | "compensation_refused" | "write_failed" | "chart_no_products" | "chart_bad_size" | "chart_failed" | "alert_already_acknowledged" | "alert_not_firing" | "ack_too_short" | "invalid_thresholds" | "adapter_no_drills" | "adapter_no_ledger_check" | "adapter_no_switch" | "adapter_no_rewrite" | "adapter_no_burndown" | "adapter_no_rights" | "adapter_no_state_db" | "adapter_failed";

export type DesktopError = { kind: ErrorKind, code: MessageCode, params: { [key in string]: string }, 
/**
 * The English sentence: for logs, and the window's fallback.
 */
message: string, };
