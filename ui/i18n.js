// Chinese and English for every visible string. `t(key, vars)` fills `{name}` placeholders.
// `key` is a `MessageKey`, a key of the English catalogue, so `tsc` refuses a misspelt one; a
// key built from a Rust enum is checked through the generated union (`st_${CaseStatus}`), and a
// word a server records as text goes through a typed table (`wordOf`) or `said`.
import { byId } from "./dom.js";

/** @typedef {"en" | "zh"} Language */

// The English catalogue names every key: `MessageKey` is its keys, so `tsc` refuses a t()
// call with a key it does not hold. The Chinese one may leave a key out (English is said).
const EN = {
  connecting: "Connecting…", readOnly: "read-only", langButton: "中文",
  alertsTitle: "Alerts", alertsNone: "Nothing fires.", alertKind: "Alert", alertValue: "Value", alertAck: "Acknowledged",
  alertOpen: "Open", alertAckBtn: "Acknowledge…", ackTitle: "Acknowledge the alert", ackReason: "Why (goes to the audit log)",
  ackFor: "Until", ackUntilCleared: "it clears", ack30m: "30 minutes", ack1h: "1 hour", ack4h: "4 hours", ackGo: "Acknowledge",
  ackBy: "{who}, until {until}: {reason}", ackDone: "Alert {key} acknowledged; it closes by itself when the alert clears.",
  alertBacklog: "Alert: backlog above", alertBreakers: "Alert: open breakers from",
  DRIFT_CONFIRMED: "Drift confirmed", BACKLOG: "Backlog", BREAKER_OPEN: "Breakers open",
  av_DRIFT_CONFIRMED: "drift {n}", av_LEDGER_MISMATCH: "gap {n}", av_KEY_MISSING: "no stock key",
  av_OVERSOLD: "{n} units beyond stock", av_OVERSOLD_one: "1 unit beyond stock", av_BACKLOG: "backlog {n}",
  av_BREAKER_OPEN: "{n} engines", av_BREAKER_OPEN_one: "1 engine",
  firingForS: "for {n} s", firingForMin: "for {n} min", firingForH: "for {h} h {m} min",
  ovAlertLine: "{what} ({about}): {taken}",
  why_DRIFT_CONFIRMED: "Two readings in a row agree that Redis holds a different stock than the DB allows; the value is Redis less that figure (above zero, Redis may accept orders the DB will refuse). Open the product and rewrite its Redis stock from the DB (Rewrite selected…).",
  why_BACKLOG: "More reservations wait in the streams to be persisted than this profile's threshold allows: the DB lags behind Redis, and losing Redis now would lose more. Check that the engines are persisting and the DB keeps up (Overview: engines, p99); the alert clears once the backlog drains.",
  why_BREAKER_OPEN: "At least this profile's number of live engines have their Redis breaker open: they cannot reach Redis and sell through the DB path, slower. Once Redis answers again, run the guided exit (Degrade screen) to bring them back to Redis.",
  navConnections: "Connections", navBoard: "Live board", navRepair: "Reconcile & rewrite", navAudit: "Audit",
  production: "PRODUCTION", staging: "STAGING", sandbox: "SANDBOX", chooseEnvironment: "choose…",
  oncall: "on-call", approver: "approver", facilitator: "facilitator", viewer: "viewer", admin: "admin",
  rewrite_stock: "rewrite Redis stock", change_switch: "change the degrade switch",
  acknowledge_alert: "acknowledge alerts", run_drill: "run drills", halt_drill: "halt drills",
  review_drill: "review drills", record_baselines: "record adapter baselines",
  profileName: "Name", environment: "Environment", role: "Role", mysqlUrl: "MySQL URL", redisUrl: "Redis URL",
  keyPrefix: "Key prefix", passwords: "Passwords", newProfile: "New profile", editProfile: "Edit profile {name}",
  replica: "replica", mysqlPassword: "MySQL password", replicaUrl: "Replica URL (optional)", replicaPassword: "Replica password",
  redisPassword: "Redis password", keepPassword: "blank: keep the stored one",
  redisCa: "Redis CA file (rediss://)", redisCert: "Redis client certificate", redisKey: "Redis client key",
  mysqlSslMode: "MySQL ssl-mode", sslModeDefault: "default (VERIFY_IDENTITY with a CA, else PREFERRED)",
  mysqlCa: "MySQL CA file", mysqlCert: "MySQL client certificate", mysqlKey: "MySQL client key",
  ssl_DISABLED: "DISABLED", ssl_PREFERRED: "PREFERRED", ssl_REQUIRED: "REQUIRED", ssl_VERIFY_CA: "VERIFY_CA",
  ssl_VERIFY_IDENTITY: "VERIFY_IDENTITY",
  // What the console's connection uses (the health strip's title): `Transport`, worded here.
  tr_mysql: "MySQL {mode}: {tls}", tr_redis: "Redis: {how}", tr_clear: "not encrypted",
  tr_redis_pinned: "TLS, pinned CA", tr_redis_system: "TLS, system CAs", tr_client_cert: ", client certificate",
  passwordHint: "Passwords go to the OS keychain and are never shown again. On a machine without one the profile is saved all the same and each password is read from its variable when connecting: STOCKGUARD_MYSQL_PASSWORD, STOCKGUARD_MYSQL_REPLICA_PASSWORD, STOCKGUARD_REDIS_PASSWORD.",
  noKeychainHere: "There is no OS keychain on this machine: no password was stored.",
  passwordsFromEnv: "Its passwords are read from {vars} when it connects: set them before starting the console.",
  inKeychain: "keychain", fromEnv: "environment",
  save: "Save", clearForm: "New", edit: "Edit", test: "Test", delete: "Delete", confirmDelete: "Really delete?",
  connectBtn: "Connect", active: "connected", saved: "Profile {name} saved.", deleted: "Profile {name} deleted.",
  probeOk: "{name}: MySQL {mysql} ms ({version}), Redis {redis} ms.", none: "none",
  redisLatency: "Redis", dbLatency: "DB", backlog: "Stream backlog", pendingReleases: "Pending releases",
  readTook: "Reading", boardUpdate: "Board update", lastTick: "Updated", allStatuses: "All statuses", searchPlaceholder: "Search id or name",
  OVERSOLD: "OVERSOLD", LEDGER_MISMATCH: "LEDGER_MISMATCH", KEY_MISSING: "KEY_MISSING", KEY_UNREADABLE: "KEY_UNREADABLE",
  HISTORY_LOST: "HISTORY_LOST", REDIS_HIGH: "REDIS_HIGH", REDIS_LOW: "REDIS_LOW", OK: "OK", UNSETTLED: "UNSETTLED",
  legendTitle: "What the statuses mean, and what to do", soldOut: "sold out",
  oc_APPLIED: "APPLIED", oc_REBUILT: "REBUILT", oc_NOOP: "NOOP", oc_DRY_RUN: "DRY_RUN", oc_REFUSED_FENCE: "REFUSED_FENCE",
  oc_LOCK_BUSY: "LOCK_BUSY", oc_FAILED: "FAILED", lo_PENDING: "PENDING", lo_DONE: "DONE", lo_SKIPPED: "SKIPPED",
  ovVerdictExact: "Exact: every product's Redis stock matches the ledger, nothing oversold.",
  ovVerdictUnsafe: "Not safe", ovVerdictWatch: "Needs attention", listSep: ", ", verdictSep: ": ",
  ovVerdictOversold: "products oversold: {n}", ovVerdictLedger: "ledger mismatches: {n}",
  ovVerdictDrifting: "drifting: {n}", ovVerdictOther: "sale-wide alerts: {n}", ovVerdictUnacked: "; not acknowledged: {n}",
  why_OVERSOLD: "The DB holds orders for more units than the product had. Nothing on the board repairs this: open a compensation case for the extra orders (Compensation screen), and find the cause before selling more.",
  why_LEDGER_MISMATCH: "The DB's stock does not equal initial stock minus its live orders: someone or something changed stock or orders by hand. Run the ledger check, find the edit in the audit log, and correct the DB before trusting Redis against it.",
  why_HISTORY_LOST: "Redis went back in time (a restart without persistence, a flush, a failover to a lagging replica): the DB holds reservations Redis has no record of. The drift shown is not a verdict. Rebuild the product's Redis stock with a fenced rewrite.",
  why_KEY_MISSING: "The product's stock key is not in Redis, so it cannot be sold from Redis. Rewrite it from the DB (Rewrite selected…), or send the product to the DB path (Degrade switch) until you can.",
  why_KEY_UNREADABLE: "A sale read through its adapter: the product's stock key holds what is not a whole number (the reading names the key and the value), so the sale cannot sell it from Redis and no drift can be read. The other products read as usual. Find who wrote it; rewrite the key from the DB.",
  why_REDIS_HIGH: "Redis says more units are left than the DB allows: Redis could accept orders the DB will refuse. Confirmed over two readings, rewrite the product's Redis stock from the DB.",
  why_REDIS_LOW: "Redis says fewer units are left than the DB allows: buyers are turned away from stock that exists. Not urgent for oversell; rewrite the product's Redis stock from the DB when it stays.",
  why_UNSETTLED: "A sale read through its adapter: the product moved between the reading's two passes, or orders wait in a queue whose messages name no product. Its drift is not a verdict yet. Wait for a quiet moment; nothing to repair until it settles.",
  why_OK: "Redis stock equals what the DB allows, counting reservations in flight and releases on their way. Nothing to do. A product with no stock left shows OK · sold out.",
  countOf: "{shown} of {total} products", selected: "{n} selected", clearSelection: "Clear selection",
  chartSelected: "Chart selected", rewriteSelected: "Rewrite selected…",
  product: "Product", name: "Name", status: "Status", initial: "Initial", dbStock: "DB stock", live: "Live orders",
  inflight: "In flight", release: "Pending release", redis: "Redis", expected: "Expected", drift: "Drift",
  chartTitle: "Drift over time", chartAxisX: "seconds before the last reading", chartAxisY: "drift (units)",
  pngPathPlaceholder: "PNG file (blank: default path)", exportPng: "Export PNG", close: "Close",
  pngSaved: "Chart saved to {path}", pickProducts: "Pick products on the board first (tick their boxes).",
  ledgerTitle: "Ledger reconciliation",
  ledgerHint: "Checks initial stock = DB stock + live orders for every product, in chunks, read-only.",
  runLedger: "Run ledger check", ledgerProgress: "{done} of {total} products checked",
  ledgerSummary: "{checked} products checked in {chunks} chunks, {ms} ms (slowest statement {slowest} ms) on {server}{replica}.",
  onReplica: ", replica {lag} s behind", noMismatch: "The ledger adds up for every product.",
  gap: "Gap", oversold: "Oversold", yes: "yes", no: "no",
  rewriteTitle: "Rewrite Redis stock", rewriteProducts: "Products (ids, comma separated; picked on the board)",
  reason: "Reason (goes to the audit log)", dryRun: "Dry run", rewrite: "Rewrite",
  outcome: "Outcome", before: "Before", after: "After", delta: "Delta", driftAfter: "Drift after",
  fenceToken: "Fence token", auditId: "Audit id", problem: "Problem",
  rwPrefilled: "Filled with the {n} products that drift: {ids}", rwPrefilledOne: "Filled with the one product that drifts: {ids}",
  rwNothingDrifts: "No product drifts: pick products on the board, or type their ids.",
  dryRunWrite: "Dry run of {id}: would write {after} over {before} ({delta}), leaving drift {drift}.",
  dryRunRebuild: "Dry run of {id}: would rebuild the missing key at {after}, leaving drift {drift}.",
  dryRunReset: "Dry run of {id}: Redis lost its history, so it would reset the stock to {after} (now {before}), leaving drift {drift}.",
  dryRunNothing: "Dry run of {id}: would write nothing (Redis already agrees with the DB), leaving drift {drift}.",
  dryRunTookNothing: "Nothing was written; no lock or fencing token taken.",
  confirmTitle: "Production: confirm the rewrite",
  confirmHint: "Type each product id to confirm. Redis stock of these products will change.",
  typeId: "Type {id}", cancel: "Cancel", reasonRequired: "Give a reason: it goes to the audit log.",
  badIds: "Product ids are numbers separated by commas: {text}",
  allActions: "All actions", outcomePlaceholder: "Outcome (e.g. APPLIED)",
  au_STARTED: "STARTED", au_RECORDED: "RECORDED", au_OK: "OK", au_ACKNOWLEDGED: "ACKNOWLEDGED", au_CLOSED: "CLOSED",
  au_requested: "requested", au_nothing_running: "nothing running",
  // The audit log's actions (audit.js `ACTIONS`: the codes the core, the engine and the
  // database's triggers record), the outcomes and the role not said above.
  ac_rewrite: "Rewrite", ac_rewrite_dry_run: "Rewrite, dry run", ac_rewrite_begin: "Rewrite begun (fencing token taken)",
  ac_degrade_switch: "Degrade switch set", ac_degrade_exit: "Guided exit from DB mode", ac_sandbox_seed: "Demo sale loaded",
  ac_alert_ack: "Alert acknowledged", ac_alert_ack_closed: "Acknowledgement ended", ac_drill_halt: "Drills halted",
  ac_drill_review: "Drill review notes", ac_drill_dead: "Dead drill run ended", ac_roles_apply: "Roles applied",
  ac_compensation_plan: "Compensation: plan set", ac_compensation_open: "Compensation: case opened",
  ac_compensation_propose: "Compensation: proposed", ac_compensation_approve: "Compensation: approved",
  ac_compensation_reject: "Compensation: rejected", ac_compensation_execute: "Compensation: execution started",
  ac_compensation_executed: "Compensation: executed", ac_compensation_close: "Compensation: case closed",
  ac_compensation_note: "Compensation: note", ac_adapter_rewrite: "Rewrite (adapter sale)",
  ac_adapter_baseline: "Baselines recorded (adapter sale)", ac_adapter_switch: "Sale's switch set (adapter sale)",
  au_COMPLETED: "COMPLETED", au_PLANNED: "PLANNED", au_ON: "ON", au_OFF: "OFF", au_recorded: "recorded",
  au_db: "database",
  auditSearchPlaceholder: "Target, actor or reason", refresh: "Refresh",
  at: "At", actor: "Actor", action: "Action", target: "Target", reasonShort: "Reason", details: "Details",
  profile: "Profile error", keychain: "Keychain error", connect: "Connection error", not_connected: "Not connected",
  query: "Query error", refused: "Refused", confirmation_required: "Confirmation required", invalid: "Check the input",
  chart: "Chart error", error: "Error",
  navDegrade: "Degrade", engineMode: "Mode", degradeTitle: "Degrade switch",
  acceptedSurvives: "Accepted",
  inClear: "In clear (no TLS)",
  adapterSale: "Sale over its adapter", inFlightEntries: "{n} in flight",
  ovOverAdapter: "Sale {sale} is read through its adapter: units sold come from its reading, orders per second from its own orders table (the last minute). Answers other than an order, p99, the backlog, the mode and the burn-down are our engine's, which this sale does not run.",
  lostTitle: "Accepted but lost",
  lostSummary: "{orders} orders of {products} products: the buyer was told the order was taken, the sale's consumer acknowledged it, and no order row exists. Their units are stranded; they belong in the product's compensation case.",
  lostNone: "None: every order the sale's consumer acknowledged is a row.",
  lostUnknowable: "This sale's in-flight source keeps nothing it carried (a RabbitMQ queue, a table): lost orders cannot be known here.",
  lostOrderIds: "Order ids (the sale's own)", lostCount: "Lost",
  guaranteeReplica: "replica has it", guaranteeDbWriteThrough: "written to DB first",
  guaranteeNoReplicas: "no replica", guaranteeNoneOptedOut: "may be lost (opted out)",
  guaranteeHint: "What an ACCEPTED order survives, for the weakest live engine: a replica has it, or the DB has it before the buyer hears. \"may be lost\": {engines} engine(s) run with --replica-acks 0, and a failover to a lagging replica can lose what they accepted.",
  guaranteeUnknown: "No live engine reports what an ACCEPTED order survives.",
  degradeHint: "DB mode sends orders straight to the database (Redis untouched). Leaving it is a guided procedure: sales pause for a moment while Redis is rebuilt from the database.",
  scope: "Scope", mode: "Mode", revision: "Revision", scopePlaceholder: "Product id (blank: the whole sale)",
  degradeOn: "DB mode on", degradeOff: "Leave DB mode (guided)", instance: "Instance", listen: "Address",
  liveCol: "Live", breaker: "Breaker", took: "Took", stale: "stale {s} s",
  neverSet: "The switch was never set: every product is NORMAL.",
  ackLine: "Revision {revision}: applied by {applied} of {live} live instances{took}", ackTook: " in {ms} ms",
  ackNone: "Revision {revision}: no live engine instance.",
  exitConfirmTitle: "Production: confirm the guided exit", exitConfirmHint: "Type {scope} to rebuild Redis and leave DB mode.",
  step_checked: "Checked: Redis answers; {products} products; {live_instances} live instances",
  step_paused: "Sales paused (revision {revision}): {applied} of {live} instances",
  step_drained: "In-flight reservations persisted",
  step_rebuilt_sum: "Redis rebuilt from the DB for {n} of {total} products (buyers and stock); stock changed: {changed}",
  step_resumed: "NORMAL (revision {revision}): {applied} of {live} instances",
  step_verified: "Verified {products} products; drifting: {drifting}",
  exitDone: "Back on Redis (revision {revision}); sales paused {ms} ms; audit {audit}.",
  NORMAL: "NORMAL", DEGRADED: "DEGRADED", PAUSED: "PAUSED",
  br_CLOSED: "closed (healthy)", br_OPEN: "open (Redis cut off)", br_HALF_OPEN: "half-open (trying Redis)",
  navDrills: "Drills", drillsTitle: "Fault drills", drillLength: "Length", drillFull: "full",
  drillShort: "short (×0.3)", drillShortest: "shortest (×0.1)", drillExtraDb: "Extra DB latency (ms)",
  drillStagingConfirm: "This is staging: run anyway", drillRun: "Run drill", drillHalt: "Halt running drills…",
  drillHaltGo: "Halt", drillInvariants: "Invariants", drillLog: "Timeline", drillHistory: "Runs",
  drillCompareHint: "Tick two runs: the first ticked is A, the baseline", drillThreshold: "Threshold %",
  drillCompare: "Compare", drillRunId: "Run", drillScenario: "Drill", drillStarted: "Started", drillFinished: "Finished",
  drillWhy: "Why", drillReport: "Report", drillReplay: "Replay", drillWatch: "Watch",
  drillAbout: "{description} Load {duration} s at full length; faults: {faults}.",
  haltTitle: "Halt every running drill of this sale",
  haltHint: "The runners stop the load and restore every fault within a second or two. The request goes through the database, so it is recorded even if a runner is dead. Audited.",
  haltAsked: "Halt requested for run(s) {runs}.", haltNone: "No drill was running: nothing to halt (the audit log says so).",
  drillStartedMsg: "Drill run #{id} started (runner pid {pid}; its output: {log}).",
  refusal_production: "Drills are refused on production profiles: connect to a sandbox or staging sale to run one.",
  refusal_staging_unconfirmed: "This profile is staging: tick the box to run a drill on it.",
  refusal_read_only: "This profile is read-only: drills change the sale.",
  refusal_role: "The {role} role may not run drills.",
  viewLive: "Run #{id} · {title}", viewReplay: "Replay of run #{id} · {title}",
  heartbeat: "heartbeat {s} s ago", replayPlay: "Play", replayPause: "Pause",
  st_phase: "Phase", st_faults: "Faults active", st_mode: "Engines Redis / DB", st_load: "Load (that second)",
  st_loadLine: "{sent} sent, {accepted} accepted, {errors} errors, p99 {p99} ms", st_drift: "Drift (worst product)",
  st_backlog: "Backlog / in flight", st_oversold: "Oversold units", st_stock: "Redis / DB stock", st_verdict: "Verdict",
  verdictPassed: "every check passed", verdictFailed: "failed checks: {checks}", verdictHalted: "halted by hand: {reason}",
  verdictEnded: "ended early: {reason}",
  verdictInconclusive: "broke nothing but proved nothing: {checks}",
  phase_rig: "rig", phase_load: "load", phase_drain: "drain", phase_verify: "verify", phase_done: "done",
  RUNNING: "RUNNING", PASSED: "PASSED", FAILED: "FAILED", INCONCLUSIVE: "INCONCLUSIVE", ABORTED: "ABORTED", HALTED: "HALTED", DEAD: "DEAD",
  inv_fault_took_effect: "Each fault took effect inside its window", inv_engines_back_at_end: "The rig's engines back at the end",
  inv_oversell: "No oversell", inv_redis_stock_negative: "Redis stock never below zero beyond releases owed",
  inv_drift_outside_faults: "No drift outside faults", inv_redis_stock_never_negative: "Redis stock never below zero beyond releases owed",
  inv_no_accepted_order_lost: "No accepted order lost", inv_no_duplicate_order: "No duplicate order",
  inv_no_drift_outside_faults: "No drift outside faults", inv_drift_zero_at_end: "Drift 0 at the end",
  inv_load_sent_as_planned: "Load sent as planned (90% or more)",
  inv_no_stale_rewrite: "No stale rewrite", inv_accepted_orders_always_found: "Accepted orders always found",
  inv_atEnd: "Lost and duplicated orders: checked at the end",
  ev_phase: "phase {phase}", ev_fault_injected: "fault on: {fault}", ev_fault_restored: "fault off: {fault}",
  ev_mode: "engines Redis/DB/neither {redis}/{db}/{unknown}", ev_repair: "{what}: {outcome}",
  ev_violation: "violated {invariant}: {figure}", ev_abort: "ABORT: {reason}", ev_halt: "HALT: {reason}", ev_note: "{text}",
  // The drill screens' remaining words: checks a verdict may name beyond the invariants above,
  // the runner's repairs (view.js `REPAIRS`), the compared figures (history.js `FIGURES`), and
  // seconds as the timeline and its charts show them.
  inv_failover_drift_confirmed: "Drift confirmed within 2 ticks of the failover",
  slo_time_to_db_path: "Time to the DB path", slo_recovery_time: "Recovery time", slo_buyer_error_rate: "Buyer error rate",
  slo_p99_latency: "Latency p99", slo_backlog_catch_up: "Backlog catch-up",
  rp_fenced_rewrite: "fenced rewrite", rp_guided_exit: "guided exit to Redis", rp_failover: "failover",
  fig_oversold_units: "Units oversold (must be 0)", fig_lost: "Orders lost (must be 0)",
  fig_duplicated: "Orders duplicated (must be 0)", fig_buyer_error_rate: "Buyer error rate",
  fig_p99_ms: "Latency p99 (ms)", fig_time_to_db_path_ms: "Time to the DB path (ms)", fig_recovery_s: "Recovery (s)",
  fig_drift_peak: "Drift peak (units)", fig_switch_propagation_ms: "Switch propagation (ms)",
  seconds: "{n} s",
  chartLoad: "Accepted and errors per second", chartDrift: "Drift (units)", chartBacklog: "Backlog and in flight",
  chartEngines: "Engines on Redis / on the DB", s_accepted: "accepted", s_errors: "errors", s_drift: "drift",
  s_worst: "worst product", s_backlog: "backlog", s_inflight: "in flight", s_redis: "on Redis", s_db: "on DB",
  pickTwo: "Tick exactly two runs to compare.",
  compareHead: "A: #{a} {sa} · B: #{b} {sb} · same drill file: {plan} · same requests: {schedule} · threshold {threshold}%",
  figure: "Figure", change: "Change", regressed: "REGRESSED", noRegression: "No regression.",
  regressions: "{n} regression(s): {list}", reportOf: "Report of run #{id}",
  runner: "Runner error",
  rightsTitle: "What this connection may do (the servers' word)", rightsWho: "MySQL account {mysql} · Redis user {redis}",
  allowed: "allowed", refusedBy: "refused by the server", unknownRight: "unknown",
  cap_read: "Read the sale", cap_rewrite: "Rewrite Redis stock", cap_degrade: "Degrade switch",
  cap_approve_compensation: "Approve compensation", cap_execute_compensation: "Open, plan and execute compensation",
  cap_run_drills: "Run drills",
  cap_acknowledge_alerts: "Acknowledge alerts",
  navCompensation: "Compensation", cpTitle: "Oversell compensation", cpAll: "All cases", cpProduct: "Product id",
  cpOpen: "Open case", cpCase: "Case", cpStatus: "Status", cpLines: "Lines", cpTotal: "Total", cpAge: "Age",
  cpMaker: "Maker", cpOrder: "Order", cpBuyer: "Buyer", cpQty: "Qty", cpAccepted: "Accepted at", cpPrice: "Price",
  cpReason: "Reason", cpAction: "Action", cpAmount: "Amount", cpOutcome: "Outcome", cpOversold: "Oversold lines get",
  cpWithdrawn: "Withdrawn lines get", cpCoupon: "Coupon (cents)", cpNote: "Note", cpSavePlan: "Save plan",
  cpPropose: "Propose", cpApprove: "Approve", cpReject: "Reject", cpStepReason: "Reason (recorded with the step)",
  cpConfirm: "Type the case id to execute", cpExecute: "Execute", cpClose: "Close the case…", cpExport: "Export CSV",
  cpCloseTitle: "Close case {id}?", cpCloseGo: "Close the case",
  cpCloseDraftHint: "This draft has no lines: closing it ends it, and nobody is compensated by it. (A draft with lines is not closed: propose its plan for a checker.) Audited.",
  cpCloseExecutedHint: "Every line of this case was executed: closing it files the case. Nothing is paid or changed. Audited.",
  cpHead: "Case {id} · product {product} · {status} · {oversold} oversold, {withdrawn} withdrawn · total {total}",
  cpMeta: "Opened by {by} at {at} · maker {maker} · approvals {n}/{needed} {who}",
  cpOpenedWith: "{n} affected orders found in the ledger", cpReadBy: "recorded from the sale by {who}, not by the case's opener: ask them", cpSoldAs: "unit #{unit} sold, beyond the {initial} on sale", cpTwoAbove: "two checkers: the total {total} is above {above}", cpTwoNoRow: "two checkers: the settings row is missing", cpPlanSaved: "Plan saved.", cpPerAction: "{action}: {n} lines, {total}", cpProgress: "Executing: {done}/{total} ({order})",
  cpExecuted: "{done} done, {skipped} skipped, {already} already done by another run, {unknown} unknown",
  cpSaved: "Saved to {path}", cpOpened: "Case {id}: {n} lines added", cpWaiting: "{n} newly affected orders wait for this case to close",
  cpOnlyDraft: "Only a draft's plan can change", cpOnlyProposed: "Only a proposed case is approved or rejected",
  cpOnlyApproved: "Only an approved case is executed", cpOnlyClosable: "Only a draft or an executed case is closed",
  cpStepped: "Case {id}: {status} (as {actor}; approvals {n}/{needed})",
  cpAgeMin: "{n} min",
  sk_OPEN: "opened", sk_PROPOSE: "proposed", sk_APPROVE: "approved", sk_REJECT: "rejected", sk_EXECUTE: "execution started",
  sk_EXECUTED: "executed", sk_CLOSE: "closed", sk_NOTE: "note",
  // The sale's timeline (features/timeline.js).
  navTimeline: "Timeline", tlHint: "What happened to the sale, newest first, from the records it keeps; it follows the live sale while open.",
  tlSince: "How far back", tl1h: "Last hour", tl2h: "Last 2 hours", tl24h: "Last 24 hours", tl7d: "Last 7 days",
  tlKind: "Kind", tlAllKinds: "All kinds", tlProduct: "Product id (Enter)", tlAllProducts: "All products",
  tlRecord: "Record", tlWholeSale: "whole sale", tlNone: "Nothing happened in this window.",
  tlTruncated: "Older events of the window were left out: the newest {n} are listed.",
  tlWhatHappened: "What happened to it?", tlPickOne: "Pick one product on the board (tick its box) to see what happened to it.",
  tk_switch_change: "switch change", tk_guided_exit: "guided exit", tk_rewrite: "rewrite", tk_repair: "repair",
  tk_alert_acknowledged: "alert acknowledged", tk_alert_ack_closed: "acknowledgement closed",
  tk_compensation_step: "compensation step", tk_drill_started: "drill started", tk_drill_fault: "drill fault",
  tk_drill_verdict: "drill verdict", tk_audit: "audited action",
  tlo_INJECTED: "injected", tlo_RESTORED: "restored", tlo_CLEARED: "cleared", tlo_EXPIRED: "expired",
  st_DRAFT: "draft", st_PROPOSED: "proposed", st_APPROVED: "approved", st_EXECUTING: "executing",
  st_EXECUTED: "executed", st_CLOSED: "closed", act_FULFIL: "fulfil", act_CANCEL_REFUND: "cancel & refund",
  act_COUPON: "coupon", act_NOTE: "note", rs_OVERSOLD: "oversold", rs_WITHDRAWN: "withdrawn",
  // The sale overview.
  navOverview: "Overview", ovSold: "Units sold", ovSoldOf: "of {initial} ({pct}%), {left} left", ovRate: "Orders/s",
  ovAcceptedRate: "{n} accepted/s", ovAccepted: "Accepted", ovSoldOut: "Sold out", ovErrors: "Errors",
  ovRefused: "Other answers", ovP99: "p99 latency", ovSinceStart: "since start {v}", ovAlerts: "Open alerts",
  ovCases: "Open compensation cases", ovEngines: "Engines", ovAnswer: "Scrape", ovRequests: "Requests",
  ovAnswered: "answered", ovNotAnswering: "NOT ANSWERING", ovEnginesSummary: "{answered} of {total} engines answered the scrape",
  ovNoEngines: "No engine has reported a heartbeat: no order figures.", ovAckedBy: "acknowledged by {who}: {why}",
  ovNotAcked: "not acknowledged", ovNoAlerts: "No alert is firing.", ovNoCases: "No open case.",
  ovCase: "Case {id}, product {product}: {status}, {lines} lines", ovAt: "Updated {at}",
  ovBurndown: "Stock burn-down", ovProductPlaceholder: "Product id (blank: the whole sale)", ovShow: "Show",
  ovWholeSale: "Whole sale", ovProduct: "product {id}", ovBurnAxisX: "minutes since the first order", ovBurnAxisY: "units left",
  ovBurnInfo: "{series}: {left} of {initial} units left ({secs} s buckets)",
  ovBurnAlt: "Stock burn-down of {series}: {left} of {initial} units left",
  // Keyboard and accessibility (keyboard.js, the accessible names of index.html).
  navLabel: "Screens", shortcutsTitle: "Keyboard shortcuts", shortcutKeys: "Keys", shortcutDoes: "What they do",
  kbScreen: "Open the screen {screen}", kbHelp: "This list of shortcuts", kbLanguage: "Switch the language (中文 / English)",
  kbEscape: "Close the open dialog or panel", kbRows: "Move between the rows of the board",
  kbPick: "Pick or unpick the product of the row (or tick a box)", kbOpen: "Open the compensation case of the row",
  kbTab: "Next and previous control", kbTyping: "Shortcuts do nothing while you type in a field.",
  pick: "Pick", actions: "Actions", pickRow: "Pick product {id}", replaySpeed: "Replay speed",
  replayAt: "Moment of the run", chartAlt: "Drift over time of products {products}", openCase: "Open case {id}",
  // Attach a sale (features/attach.js): the proposal of `adapter init` as a form.
  attachOpen: "Attach a sale…", attachTitle: "Attach a sale",
  attachWhereHint: "Where the sale is. It is only read; passwords go to the keychain with the profile (without a keychain, to nowhere: the profile then reads STOCKGUARD_MYSQL_PASSWORD, STOCKGUARD_REDIS_PASSWORD and STOCKGUARD_STATE_PASSWORD when connecting).",
  attachAmqpUrl: "RabbitMQ URL (when the sale has a queue)", attachKeys: "Keys to sample (SCAN pattern)",
  attachStateUrl: "State database URL (Stockguard's own)", attachStatePassword: "State database password",
  attachRead: "Read the sale", attachSaleName: "Sale name (in the state database)", attachStock: "Stock",
  attachStockTable: "Stock table", attachProductColumn: "Product column", attachRemaining: "Units left column",
  attachReserved: "Reserved units column (optional)", attachNameColumn: "Product name column (optional)",
  attachInitialFrom: "Initial stock", attachInitialBaseline: "not stored: record a baseline on saving",
  attachInitialColumn: "a column", attachInitialFixed: "the same number for every product",
  attachInitialValue: "Initial stock column or number", attachOrders: "Orders", attachOrdersTable: "Orders table",
  attachQuantity: "Quantity column", attachQuantityOne: "blank: one unit per order", attachStatusColumn: "Status column",
  attachOrderId: "Order id column", attachCreated: "Created column", attachUser: "Buyer column",
  attachJoinTable: "Parent order table", attachJoinOn: "Column naming the parent", attachJoinKey: "Parent's key column",
  attachStatusesCaption: "Which statuses hold a unit: the orders counted beside each show what a label really means",
  attachStatusValue: "Status as stored", attachStatusOrders: "Orders", attachStatusMeaning: "Their unit",
  attachStatusLabel: "What orders of status {value} do with their unit",
  attachAddStatus: "Another status value (none found yet)", attachAdd: "Add the status",
  attachAddStock: "Add a stock table", attachAddOrders: "Add an orders table", attachAddRedis: "Add Redis stock",
  sm_live: "hold it", sm_reserving: "hold it, reserved (unpaid)", sm_released: "gave it back",
  attachRedis: "Redis", attachKeyTemplate: "Stock key template", attachHashTotal: "Hash field: total",
  attachHashSold: "Hash field: sold", attachBucketCount: "Bucket count key template", attachBuyers: "Buyer set template (optional)",
  attachKeySample: "{key} = {value}", attachKeyMissing: "{key}: no such key",
  attachInflight: "In flight", attachSource: "Where accepted orders wait", attachSourceNone: "nowhere: orders are rows at once",
  attachSourceStream: "a Redis stream", attachSourceRabbit: "a RabbitMQ queue", attachStream: "Stream key",
  attachGroup: "Consumer group", attachProductField: "Field naming the product", attachOrderIdField: "Field naming the order (optional)",
  attachQueue: "Queue", attachManagementUrl: "Management API (to see what consumers hold)", attachDepth: "{n} accepted orders wait in flight now.",
  attachPreview: "Preview: the first products, read through this form", attachReading: "Reading the sale…",
  attachPreviewBlocked: "Correct the marked fields to see the reading.",
  attachPreviewRead: "Read at {at}: {n} products of {total}.",
  attachSaveAs: "Save as a profile", attachReason: "Why (the baselines recorded go to the audit log)",
  attachSave: "Save the adapter and the profile", attachProposed: "{n} keys sampled. Check each field, the statuses first.",
  attachSaved: "Profile {name} saved; its adapter file is {path}; {n} baselines recorded.",
  is_column: "column", is_number: "number", is_baseline: "baseline", is_none: "no baseline yet",
  ap_empty: "needed", ap_not_a_name: "{name} is not a plain SQL name (letters, digits, _ and $)",
  ap_no_placeholder: "{name} does not say where the product goes: write {id}", ap_not_a_number: "{name} is not a stock (0 or more)",
  ap_no_table: "the sale's database has no table {name}", ap_no_column: "this table has no column {name}",
  ap_no_key: "no key of the first products matches {name}", ap_no_stream: "the sale's Redis has no stream {name}",
  ap_no_group: "the stream has no consumer group {name}", ap_no_queue: "RabbitMQ has no queue {name}",
  ap_unreachable: "RabbitMQ at {name} cannot be asked", ap_no_products: "the stock table lists no product",
  ap_no_live_status: "mark at least one status whose orders hold their unit", ap_rule: "the adapter file does not allow this:",
};

/** @typedef {keyof typeof EN} MessageKey */

/** @type {{ [K in MessageKey]?: string }} */
const ZH = {
  connecting: "连接中…", readOnly: "只读", langButton: "English",
  alertsTitle: "告警", alertsNone: "当前没有告警。", alertKind: "告警", alertValue: "数值", alertAck: "已确认",
  alertOpen: "打开", alertAckBtn: "确认…", ackTitle: "确认告警", ackReason: "原因（写入审计日志）",
  ackFor: "有效至", ackUntilCleared: "告警解除", ack30m: "30 分钟", ack1h: "1 小时", ack4h: "4 小时", ackGo: "确认",
  ackBy: "{who}，至 {until}：{reason}", ackDone: "告警 {key} 已确认；告警解除后确认会自动关闭。",
  alertBacklog: "告警：积压超过", alertBreakers: "告警：熔断引擎数达到",
  DRIFT_CONFIRMED: "漂移已确认", BACKLOG: "积压", BREAKER_OPEN: "熔断已打开",
  av_DRIFT_CONFIRMED: "偏差 {n}", av_LEDGER_MISMATCH: "差额 {n}", av_KEY_MISSING: "无库存键",
  av_OVERSOLD: "超出库存 {n} 件", av_OVERSOLD_one: "超出库存 1 件", av_BACKLOG: "积压 {n}",
  av_BREAKER_OPEN: "{n} 个引擎", av_BREAKER_OPEN_one: "1 个引擎",
  firingForS: "已持续 {n} 秒", firingForMin: "已持续 {n} 分钟", firingForH: "已持续 {h} 小时 {m} 分钟",
  ovAlertLine: "{what}（{about}）：{taken}",
  why_DRIFT_CONFIRMED: "连续两次读数一致：Redis 的库存与数据库允许的数量不同；数值为 Redis 减去该数量（大于零时，Redis 可能接受数据库将拒绝的订单）。请打开该商品，从数据库重写其 Redis 库存（“重写所选…”）。",
  why_BACKLOG: "流中等待落库的预占超过了此配置的阈值：数据库落后于 Redis，此时失去 Redis 会丢失更多。请检查引擎是否在落库、数据库是否跟得上（总览：引擎、p99）；积压消化后告警自行解除。",
  why_BREAKER_OPEN: "打开 Redis 熔断的在线引擎数达到了此配置的阈值：它们连不上 Redis，正走数据库路径售卖（较慢）。Redis 恢复后，请在“降级”页执行引导退出，让它们回到 Redis。",
  navConnections: "连接", navBoard: "实时看板", navRepair: "对账与修正", navAudit: "审计",
  production: "生产环境", staging: "预发环境", sandbox: "沙箱环境", chooseEnvironment: "请选择…",
  oncall: "值班工程师", approver: "审批人", facilitator: "演练主持", viewer: "只读用户", admin: "管理员",
  rewrite_stock: "修正 Redis 库存", change_switch: "改变降级开关",
  acknowledge_alert: "确认告警", run_drill: "运行演练", halt_drill: "叫停演练",
  review_drill: "复盘演练", record_baselines: "记录适配销售的库存基线",
  profileName: "名称", environment: "环境", role: "角色", mysqlUrl: "MySQL 地址", redisUrl: "Redis 地址",
  keyPrefix: "键前缀", passwords: "密码", newProfile: "新建连接配置", editProfile: "编辑配置 {name}",
  replica: "只读副本", mysqlPassword: "MySQL 密码", replicaUrl: "只读副本地址（可选）", replicaPassword: "副本密码",
  redisPassword: "Redis 密码", keepPassword: "留空：保留已存密码",
  redisCa: "Redis 证书颁发机构证书文件（rediss://）", redisCert: "Redis 客户端证书", redisKey: "Redis 客户端私钥",
  mysqlSslMode: "MySQL 加密连接模式", sslModeDefault: "默认（有证书颁发机构证书时校验证书与主机名，否则优先加密）",
  mysqlCa: "MySQL 证书颁发机构证书文件", mysqlCert: "MySQL 客户端证书", mysqlKey: "MySQL 客户端私钥",
  ssl_DISABLED: "不加密", ssl_PREFERRED: "优先加密", ssl_REQUIRED: "必须加密", ssl_VERIFY_CA: "加密并校验证书",
  ssl_VERIFY_IDENTITY: "加密并校验证书与主机名",
  tr_mysql: "MySQL {mode}：{tls}", tr_redis: "Redis：{how}", tr_clear: "未加密",
  tr_redis_pinned: "TLS，仅信任配置的证书颁发机构", tr_redis_system: "TLS，信任系统证书", tr_client_cert: "，已出示客户端证书",
  passwordHint: "密码保存在系统钥匙串中，不会再显示。没有钥匙串的机器上配置照样保存，连接时从各自的环境变量读取密码：STOCKGUARD_MYSQL_PASSWORD、STOCKGUARD_MYSQL_REPLICA_PASSWORD、STOCKGUARD_REDIS_PASSWORD。",
  noKeychainHere: "此机器没有系统钥匙串：密码未保存。",
  passwordsFromEnv: "连接时从环境变量 {vars} 读取其密码：请在启动控制台前设置它们。",
  inKeychain: "钥匙串", fromEnv: "环境变量",
  save: "保存", clearForm: "新建", edit: "编辑", test: "测试", delete: "删除", confirmDelete: "确认删除？",
  connectBtn: "连接", active: "已连接", saved: "配置 {name} 已保存。", deleted: "配置 {name} 已删除。",
  probeOk: "{name}：MySQL {mysql} 毫秒（{version}），Redis {redis} 毫秒。", none: "无",
  redisLatency: "Redis", dbLatency: "数据库", backlog: "消息积压", pendingReleases: "待回补",
  readTook: "读取耗时", boardUpdate: "看板刷新", lastTick: "更新于", allStatuses: "全部状态", searchPlaceholder: "按 ID 或名称搜索",
  OVERSOLD: "超卖", LEDGER_MISMATCH: "账目不平", KEY_MISSING: "键缺失", KEY_UNREADABLE: "键不可读",
  HISTORY_LOST: "Redis 历史丢失", REDIS_HIGH: "Redis 偏高", REDIS_LOW: "Redis 偏低", OK: "正常", UNSETTLED: "未稳定",
  legendTitle: "各状态的含义与处理办法", soldOut: "已售罄",
  oc_APPLIED: "已写入", oc_REBUILT: "已重建", oc_NOOP: "无需改动", oc_DRY_RUN: "试运行", oc_REFUSED_FENCE: "被栅栏拒绝",
  oc_LOCK_BUSY: "锁被占用", oc_FAILED: "失败", lo_PENDING: "待执行", lo_DONE: "已完成", lo_SKIPPED: "已跳过",
  ovVerdictExact: "准确：所有商品的 Redis 库存与账目一致，没有超卖。",
  ovVerdictUnsafe: "不安全", ovVerdictWatch: "需要关注", listSep: "，", verdictSep: "：",
  ovVerdictOversold: "超卖商品 {n} 个", ovVerdictLedger: "账目不平 {n} 个",
  ovVerdictDrifting: "库存偏差 {n} 个", ovVerdictOther: "全局告警 {n} 条", ovVerdictUnacked: "；未确认 {n} 条",
  why_OVERSOLD: "数据库中的订单数量超过了该商品的库存。看板上的操作无法修复：请在“超卖补偿”页为多出的订单开立补偿案件，并在继续销售前查明原因。",
  why_LEDGER_MISMATCH: "数据库库存不等于初始库存减去有效订单：有人或程序手工改动了库存或订单。请运行账目检查，在审计日志中找到该改动，先修正数据库，再以它为准核对 Redis。",
  why_HISTORY_LOST: "Redis 回到了过去（无持久化重启、被清空、切换到落后的副本）：数据库中有 Redis 没有记录的预留。显示的偏差不能作为结论。请用带栅栏的重写重建该商品的 Redis 库存。",
  why_KEY_UNREADABLE: "通过适配器读取的销售：该商品的库存键存的不是整数（读数会列出键名和值），销售无法从 Redis 售卖它，也读不出偏差。其他商品照常读取。请查明是谁写入的，并从数据库重写该键。",
  why_KEY_MISSING: "Redis 中没有该商品的库存键，因此无法从 Redis 销售。请从数据库重写（“重写所选…”），或在此之前把该商品切到数据库路径（降级开关）。",
  why_REDIS_HIGH: "Redis 显示的剩余数量多于数据库允许的数量：Redis 可能接受数据库将拒绝的订单。两次读数确认后，请从数据库重写该商品的 Redis 库存。",
  why_REDIS_LOW: "Redis 显示的剩余数量少于数据库允许的数量：有货却拒绝了买家。对超卖不紧急；若持续存在，请从数据库重写该商品的 Redis 库存。",
  why_UNSETTLED: "通过适配器读取的销售：该商品在两次读取之间发生了变化，或队列中的消息没有标明商品。其偏差尚不能作为结论。请等待销售平静下来；稳定之前无需修正。",
  why_OK: "Redis 库存与数据库允许的数量一致（已计入在途预留和待回补的释放）。无需处理。没有剩余库存的商品显示为“正常 · 已售罄”。",
  countOf: "显示 {shown} / 共 {total} 个商品", selected: "已选 {n} 个", clearSelection: "清除选择",
  chartSelected: "所选商品趋势图", rewriteSelected: "修正所选…",
  product: "商品ID", name: "名称", status: "状态", initial: "初始库存", dbStock: "数据库库存", live: "有效订单",
  inflight: "在途", release: "待回补", redis: "Redis", expected: "应有值", drift: "偏差",
  chartTitle: "偏差趋势", chartAxisX: "距最近一次读数的秒数", chartAxisY: "偏差（件）",
  pngPathPlaceholder: "PNG 文件（留空：默认路径）", exportPng: "导出 PNG", close: "关闭",
  pngSaved: "图表已保存到 {path}", pickProducts: "请先在看板上勾选商品。",
  ledgerTitle: "账目对账",
  ledgerHint: "分批、只读地检查每个商品：初始库存 = 数据库库存 + 有效订单。",
  runLedger: "开始对账", ledgerProgress: "已检查 {done} / {total} 个商品",
  ledgerSummary: "共检查 {checked} 个商品，{chunks} 批，耗时 {ms} 毫秒（最慢语句 {slowest} 毫秒），服务器 {server}{replica}。",
  onReplica: "，副本延迟 {lag} 秒", noMismatch: "所有商品账目一致。",
  gap: "差额", oversold: "超卖", yes: "是", no: "否",
  rewriteTitle: "修正 Redis 库存", rewriteProducts: "商品（ID，逗号分隔；可在看板上勾选）",
  reason: "原因（写入审计日志）", dryRun: "预演", rewrite: "执行修正",
  outcome: "结果", before: "修正前", after: "修正后", delta: "变化量", driftAfter: "修正后偏差",
  fenceToken: "栅栏令牌", auditId: "审计ID", problem: "问题",
  rwPrefilled: "已填入 {n} 个存在偏差的商品：{ids}", rwPrefilledOne: "已填入 1 个存在偏差的商品：{ids}",
  rwNothingDrifts: "没有商品存在偏差：请在看板上勾选商品，或输入商品 ID。",
  dryRunWrite: "预演 {id}：将以 {after} 覆盖 {before}（{delta}），修正后偏差 {drift}。",
  dryRunRebuild: "预演 {id}：将以 {after} 重建缺失的键，修正后偏差 {drift}。",
  dryRunReset: "预演 {id}：Redis 历史已丢失，将把库存重置为 {after}（当前 {before}），修正后偏差 {drift}。",
  dryRunNothing: "预演 {id}：无需写入（Redis 已与数据库一致），偏差 {drift}。",
  dryRunTookNothing: "未写入任何内容；未加锁，也未取得栅栏令牌。",
  confirmTitle: "生产环境：确认修正",
  confirmHint: "请逐个输入商品 ID 以确认。这些商品的 Redis 库存将被修改。",
  typeId: "输入 {id}", cancel: "取消", reasonRequired: "请填写原因：它会写入审计日志。",
  badIds: "商品 ID 须为逗号分隔的数字：{text}",
  allActions: "全部操作", outcomePlaceholder: "结果（如 已写入）",
  au_STARTED: "已开始", au_RECORDED: "已记录", au_OK: "成功", au_ACKNOWLEDGED: "已确认", au_CLOSED: "已关闭",
  au_requested: "已请求", au_nothing_running: "无运行中的演练",
  // 审计日志的操作、结果与角色。
  ac_rewrite: "修正 Redis 库存", ac_rewrite_dry_run: "修正预演", ac_rewrite_begin: "开始修正（取得栅栏令牌）",
  ac_degrade_switch: "设置降级开关", ac_degrade_exit: "引导退出数据库模式", ac_sandbox_seed: "载入演示活动",
  ac_alert_ack: "确认告警", ac_alert_ack_closed: "告警确认结束", ac_drill_halt: "叫停演练",
  ac_drill_review: "演练复盘记录", ac_drill_dead: "结束失联的演练", ac_roles_apply: "应用角色权限",
  ac_compensation_plan: "补偿：制定方案", ac_compensation_open: "补偿：立案",
  ac_compensation_propose: "补偿：提交审批", ac_compensation_approve: "补偿：批准",
  ac_compensation_reject: "补偿：驳回", ac_compensation_execute: "补偿：开始执行",
  ac_compensation_executed: "补偿：执行完毕", ac_compensation_close: "补偿：结案",
  ac_compensation_note: "补偿：备注", ac_adapter_rewrite: "修正库存（适配销售）",
  ac_adapter_baseline: "记录库存基线（适配销售）", ac_adapter_switch: "设置销售开关（适配销售）",
  au_COMPLETED: "已完成", au_PLANNED: "已制定", au_ON: "开启", au_OFF: "关闭", au_recorded: "已保存",
  au_db: "数据库",
  auditSearchPlaceholder: "对象、操作人或原因", refresh: "刷新",
  at: "时间", actor: "操作人", action: "操作", target: "对象", reasonShort: "原因", details: "详情",
  profile: "配置错误", keychain: "钥匙串错误", connect: "连接错误", not_connected: "未连接",
  query: "查询错误", refused: "已拒绝", confirmation_required: "需要确认", invalid: "请检查输入",
  chart: "图表错误", error: "错误",
  navDegrade: "降级", engineMode: "模式", degradeTitle: "降级开关",
  acceptedSurvives: "已受理",
  inClear: "明文连接（未加密）",
  adapterSale: "经适配器读取的销售", inFlightEntries: "{n} 条在途",
  ovOverAdapter: "销售 {sale} 通过适配器读取：已售件数来自其读数，每秒订单数来自其自己的订单表（最近一分钟）。订单以外的应答、p99、积压、模式和库存消耗图属于本系统的引擎，而该销售并不运行它。",
  lostTitle: "已受理但丢失",
  lostSummary: "{products} 个商品的 {orders} 笔订单：买家已被告知下单成功，销售的消费者已确认该消息，但订单行不存在。这些库存被滞留；它们应列入该商品的补偿案件。",
  lostNone: "无：销售的消费者确认的每笔订单都已写入。",
  lostUnknowable: "该销售的在途来源不保留已传递的内容（RabbitMQ 队列、数据表）：此处无法得知丢失的订单。",
  lostOrderIds: "订单号（销售自己的）", lostCount: "丢失",
  guaranteeReplica: "副本已确认", guaranteeDbWriteThrough: "先写入数据库",
  guaranteeNoReplicas: "无副本", guaranteeNoneOptedOut: "可能丢失（已关闭确认）",
  guaranteeHint: "已受理（ACCEPTED）的订单能经受什么，按最弱的在线引擎：副本已持有，或在告知买家之前已写入数据库。“可能丢失”：有 {engines} 个引擎以 --replica-acks 0 运行，主从切换到落后的副本时，它们已受理的订单可能丢失。",
  guaranteeUnknown: "没有在线引擎报告已受理订单的保障。",
  degradeHint: "数据库模式下订单直接写入数据库（不经过 Redis）。退出需按引导步骤：从数据库重建 Redis 期间会短暂暂停售卖。",
  scope: "范围", mode: "模式", revision: "版本", scopePlaceholder: "商品 ID（留空：整场活动）",
  degradeOn: "开启数据库模式", degradeOff: "退出数据库模式（引导）", instance: "实例", listen: "地址",
  liveCol: "存活", breaker: "熔断器", took: "耗时", stale: "失联 {s} 秒",
  neverSet: "开关从未设置：所有商品均为正常模式。",
  ackLine: "版本 {revision}：{live} 个存活实例中 {applied} 个已生效{took}", ackTook: "，用时 {ms} 毫秒",
  ackNone: "版本 {revision}：没有存活的引擎实例。",
  exitConfirmTitle: "生产环境：确认引导退出", exitConfirmHint: "输入 {scope} 以重建 Redis 并退出数据库模式。",
  step_checked: "检查完成：Redis 可达；{products} 个商品；{live_instances} 个存活实例",
  step_paused: "已暂停售卖（版本 {revision}）：{live} 个实例中 {applied} 个已生效",
  step_drained: "在途预占已全部落库",
  step_rebuilt_sum: "已从数据库重建 {total} 个商品中 {n} 个的 Redis（买家计数与库存）；库存有变化：{changed}",
  step_resumed: "已恢复正常模式（版本 {revision}）：{live} 个实例中 {applied} 个已生效",
  step_verified: "已核验 {products} 个商品；仍有偏差：{drifting}",
  exitDone: "已回到 Redis（版本 {revision}）；暂停售卖 {ms} 毫秒；审计 {audit}。",
  NORMAL: "正常", DEGRADED: "降级", PAUSED: "暂停",
  br_CLOSED: "闭合（正常）", br_OPEN: "断开（Redis 不可达）", br_HALF_OPEN: "半开（试探 Redis）",
  navDrills: "故障演练", drillsTitle: "故障演练", drillLength: "时长", drillFull: "完整",
  drillShort: "缩短（×0.3）", drillShortest: "最短（×0.1）", drillExtraDb: "额外数据库延迟（毫秒）",
  drillStagingConfirm: "这是预发环境：仍然运行", drillRun: "开始演练", drillHalt: "叫停正在运行的演练…",
  drillHaltGo: "叫停", drillInvariants: "不变量", drillLog: "时间线", drillHistory: "演练记录",
  drillCompareHint: "勾选两次演练：先勾选的为基线 A", drillThreshold: "阈值 %",
  drillCompare: "对比", drillRunId: "编号", drillScenario: "演练", drillStarted: "开始", drillFinished: "结束",
  drillWhy: "原因", drillReport: "报告", drillReplay: "回放", drillWatch: "观察",
  drillAbout: "{description}完整负载 {duration} 秒；故障：{faults}。",
  haltTitle: "叫停本场活动所有正在运行的演练",
  haltHint: "执行器会在一两秒内停止负载并恢复所有故障。请求经由数据库下达，即使执行器已失联也会被记录。写入审计日志。",
  haltAsked: "已请求叫停演练 {runs}。", haltNone: "没有正在运行的演练：无需叫停（已写入审计日志）。",
  drillStartedMsg: "演练 #{id} 已开始（执行器进程 {pid}；输出：{log}）。",
  refusal_production: "生产环境禁止演练：请连接沙箱或预发环境后再运行。",
  refusal_staging_unconfirmed: "这是预发环境：勾选确认后才能运行演练。",
  refusal_read_only: "此配置为只读：演练会改变活动数据。",
  refusal_role: "{role} 角色不能运行演练。",
  viewLive: "演练 #{id} · {title}", viewReplay: "回放演练 #{id} · {title}",
  heartbeat: "心跳 {s} 秒前", replayPlay: "播放", replayPause: "暂停",
  st_phase: "阶段", st_faults: "当前故障", st_mode: "引擎 Redis / 数据库", st_load: "负载（该秒）",
  st_loadLine: "发送 {sent}，成功 {accepted}，错误 {errors}，p99 {p99} 毫秒", st_drift: "偏差（最大单品）",
  st_backlog: "积压 / 在途", st_oversold: "超卖件数", st_stock: "Redis / 数据库库存", st_verdict: "结论",
  verdictPassed: "全部检查通过", verdictFailed: "未通过的检查：{checks}", verdictHalted: "被人工中止：{reason}",
  verdictEnded: "提前结束：{reason}",
  verdictInconclusive: "未违反任何不变量，但未能证明任何事：{checks}",
  phase_rig: "搭建环境", phase_load: "加压", phase_drain: "排空", phase_verify: "核验", phase_done: "完成",
  RUNNING: "运行中", PASSED: "通过", FAILED: "未通过", INCONCLUSIVE: "无结论", ABORTED: "已中止", HALTED: "已叫停", DEAD: "已失联",
  inv_fault_took_effect: "每个故障都在其窗口内生效", inv_engines_back_at_end: "结束时演练环境的引擎均已恢复",
  inv_oversell: "无超卖", inv_redis_stock_negative: "Redis 库存不低于零（待归还的释放除外）",
  inv_drift_outside_faults: "故障窗口外无偏差", inv_redis_stock_never_negative: "Redis 库存不低于零（待归还的释放除外）",
  inv_no_accepted_order_lost: "已受理订单无丢失", inv_no_duplicate_order: "无重复订单",
  inv_no_drift_outside_faults: "故障窗口外无偏差", inv_drift_zero_at_end: "结束时偏差为 0",
  inv_load_sent_as_planned: "负载按计划发出（至少 90%）",
  inv_no_stale_rewrite: "无过期修正写入", inv_accepted_orders_always_found: "已受理订单均可查到",
  inv_atEnd: "订单丢失与重复：结束时核验",
  ev_phase: "阶段：{phase}", ev_fault_injected: "注入故障：{fault}", ev_fault_restored: "恢复故障：{fault}",
  ev_mode: "引擎 Redis/数据库/两者皆非 {redis}/{db}/{unknown}", ev_repair: "{what}：{outcome}",
  ev_violation: "违反 {invariant}：{figure}", ev_abort: "中止：{reason}", ev_halt: "叫停：{reason}", ev_note: "{text}",
  // 演练页其余的词：检查项、修复动作、对比指标、秒。
  inv_failover_drift_confirmed: "主从切换后 2 次采样内确认偏差",
  slo_time_to_db_path: "切换到数据库路径用时", slo_recovery_time: "恢复用时", slo_buyer_error_rate: "买家错误率",
  slo_p99_latency: "延迟 p99", slo_backlog_catch_up: "积压追赶",
  rp_fenced_rewrite: "带栅栏的修正", rp_guided_exit: "引导退出回到 Redis", rp_failover: "主从切换",
  fig_oversold_units: "超卖件数（必须为 0）", fig_lost: "丢失订单（必须为 0）",
  fig_duplicated: "重复订单（必须为 0）", fig_buyer_error_rate: "买家错误率",
  fig_p99_ms: "延迟 p99（毫秒）", fig_time_to_db_path_ms: "切换到数据库路径用时（毫秒）", fig_recovery_s: "恢复用时（秒）",
  fig_drift_peak: "偏差峰值（件）", fig_switch_propagation_ms: "开关生效传播用时（毫秒）",
  seconds: "{n} 秒",
  chartLoad: "每秒成功与错误", chartDrift: "偏差（件）", chartBacklog: "积压与在途",
  chartEngines: "走 Redis / 走数据库的引擎", s_accepted: "成功", s_errors: "错误", s_drift: "偏差",
  s_worst: "最大单品", s_backlog: "积压", s_inflight: "在途", s_redis: "Redis", s_db: "数据库",
  pickTwo: "请恰好勾选两次演练进行对比。",
  compareHead: "A：#{a} {sa} · B：#{b} {sb} · 同一演练文件：{plan} · 同一请求序列：{schedule} · 阈值 {threshold}%",
  figure: "指标", change: "变化", regressed: "退化", noRegression: "无退化。",
  regressions: "{n} 项退化：{list}", reportOf: "演练 #{id} 报告",
  runner: "演练执行器错误",
  rightsTitle: "当前连接的权限（以服务器为准）", rightsWho: "MySQL 账号 {mysql} · Redis 用户 {redis}",
  allowed: "允许", refusedBy: "服务器拒绝", unknownRight: "未知",
  cap_read: "查看活动数据", cap_rewrite: "修正 Redis 库存", cap_degrade: "降级开关",
  cap_approve_compensation: "审批补偿", cap_execute_compensation: "立案、制定并执行补偿",
  cap_run_drills: "运行演练",
  cap_acknowledge_alerts: "确认告警",
  navCompensation: "超卖补偿", cpTitle: "超卖补偿", cpAll: "全部案件", cpProduct: "商品 ID",
  cpOpen: "立案", cpCase: "案件", cpStatus: "状态", cpLines: "明细", cpTotal: "合计", cpAge: "时长",
  cpMaker: "提案人", cpOrder: "订单", cpBuyer: "买家", cpQty: "数量", cpAccepted: "受理时间", cpPrice: "单价",
  cpReason: "原因", cpAction: "处理", cpAmount: "金额", cpOutcome: "结果", cpOversold: "超卖订单处理方式",
  cpWithdrawn: "撤回订单处理方式", cpCoupon: "优惠券（分）", cpNote: "备注", cpSavePlan: "保存方案",
  cpPropose: "提交审批", cpApprove: "批准", cpReject: "驳回", cpStepReason: "理由（随步骤记录）",
  cpConfirm: "输入案件编号以执行", cpExecute: "执行", cpClose: "结案…", cpExport: "导出 CSV",
  cpCloseTitle: "结案：案件 {id}？", cpCloseGo: "确认结案",
  cpCloseDraftHint: "此草稿没有任何条目：结案即结束此案，不补偿任何人。（有条目的草稿不能直接结案：请提交方案由审核人批准。）此操作记入审计。",
  cpCloseExecutedHint: "此案件的所有条目均已执行：结案即归档，不会支付或更改任何内容。此操作记入审计。",
  cpHead: "案件 {id} · 商品 {product} · {status} · 超卖 {oversold} 件，撤回 {withdrawn} 件 · 合计 {total}",
  cpMeta: "{by} 于 {at} 立案 · 提案人 {maker} · 批准 {n}/{needed} {who}",
  cpOpenedWith: "在账本中找到 {n} 笔受影响订单", cpReadBy: "由 {who}（而非立案人）从销售库记录：请向其核实", cpSoldAs: "售出的第 {unit} 件，超出在售的 {initial} 件", cpTwoAbove: "需两位审核人：合计 {total} 超过 {above}", cpTwoNoRow: "需两位审核人：缺少设置行", cpPlanSaved: "方案已保存。", cpPerAction: "{action}：{n} 条，{total}", cpProgress: "执行中：{done}/{total}（{order}）",
  cpExecuted: "完成 {done} 条，跳过 {skipped} 条，已由其他执行完成 {already} 条，结果未知 {unknown} 条",
  cpSaved: "已保存到 {path}", cpOpened: "案件 {id}：新增 {n} 条", cpWaiting: "{n} 个新受影响订单等待本案结案",
  cpOnlyDraft: "只有草稿可修改方案", cpOnlyProposed: "只有待审批案件可批准或驳回",
  cpOnlyApproved: "只有已批准案件可执行", cpOnlyClosable: "只有草稿或已执行案件可结案",
  cpStepped: "案件 {id}：{status}（操作人 {actor}；批准 {n}/{needed}）",
  cpAgeMin: "{n} 分钟",
  sk_OPEN: "立案", sk_PROPOSE: "提交审批", sk_APPROVE: "批准", sk_REJECT: "驳回", sk_EXECUTE: "开始执行",
  sk_EXECUTED: "执行完毕", sk_CLOSE: "结案", sk_NOTE: "备注",
  // 销售时间线（features/timeline.js）。
  navTimeline: "时间线", tlHint: "本次销售发生了什么，最新的在前，取自系统保存的记录；打开期间随实时销售更新。",
  tlSince: "时间范围", tl1h: "最近一小时", tl2h: "最近两小时", tl24h: "最近二十四小时", tl7d: "最近七天",
  tlKind: "类型", tlAllKinds: "全部类型", tlProduct: "商品编号（回车）", tlAllProducts: "全部商品",
  tlRecord: "记录", tlWholeSale: "整场销售", tlNone: "此时间范围内没有事件。",
  tlTruncated: "为不超过上限，较早的事件未列出：仅列出最新的 {n} 条。",
  tlWhatHappened: "它发生了什么？", tlPickOne: "请在看板上勾选一个商品，再查看它发生了什么。",
  tk_switch_change: "降级开关变更", tk_guided_exit: "引导退出", tk_rewrite: "库存重写", tk_repair: "增量修复",
  tk_alert_acknowledged: "告警已确认", tk_alert_ack_closed: "确认已关闭",
  tk_compensation_step: "补偿步骤", tk_drill_started: "演练开始", tk_drill_fault: "演练故障",
  tk_drill_verdict: "演练结论", tk_audit: "审计操作",
  tlo_INJECTED: "已注入", tlo_RESTORED: "已恢复", tlo_CLEARED: "已解除", tlo_EXPIRED: "已到期",
  st_DRAFT: "草稿", st_PROPOSED: "待审批", st_APPROVED: "已批准", st_EXECUTING: "执行中",
  st_EXECUTED: "已执行", st_CLOSED: "已结案", act_FULFIL: "补货履约", act_CANCEL_REFUND: "取消并退款",
  act_COUPON: "优惠券", act_NOTE: "备注", rs_OVERSOLD: "超卖", rs_WITHDRAWN: "撤回",
  // 活动总览。
  navOverview: "总览", ovSold: "已售件数", ovSoldOf: "共 {initial} 件（{pct}%），剩余 {left} 件", ovRate: "订单/秒",
  ovAcceptedRate: "受理 {n} 单/秒", ovAccepted: "已受理", ovSoldOut: "售罄", ovErrors: "错误",
  ovRefused: "其他应答", ovP99: "p99 延迟", ovSinceStart: "启动以来 {v}", ovAlerts: "未解决告警",
  ovCases: "未结补偿案件", ovEngines: "引擎", ovAnswer: "抓取", ovRequests: "请求数",
  ovAnswered: "已应答", ovNotAnswering: "无应答", ovEnginesSummary: "{total} 个引擎中 {answered} 个应答了抓取",
  ovNoEngines: "没有引擎上报心跳：无订单数据。", ovAckedBy: "{who} 已确认：{why}",
  ovNotAcked: "未确认", ovNoAlerts: "没有正在触发的告警。", ovNoCases: "没有未结案件。",
  ovCase: "案件 {id}，商品 {product}：{status}，{lines} 条", ovAt: "更新于 {at}",
  ovBurndown: "库存燃尽图", ovProductPlaceholder: "商品编号（留空：整场活动）", ovShow: "显示",
  ovWholeSale: "整场活动", ovProduct: "商品 {id}", ovBurnAxisX: "首单以来的分钟数", ovBurnAxisY: "剩余件数",
  ovBurnInfo: "{series}：剩余 {left} / {initial} 件（每桶 {secs} 秒）",
  ovBurnAlt: "{series} 的库存燃尽图：剩余 {left} / {initial} 件",
  navLabel: "页面", shortcutsTitle: "键盘快捷键", shortcutKeys: "按键", shortcutDoes: "作用",
  kbScreen: "打开“{screen}”页", kbHelp: "显示本快捷键列表", kbLanguage: "切换语言（中文 / English）",
  kbEscape: "关闭当前对话框或面板", kbRows: "在看板的行之间移动",
  kbPick: "勾选或取消该行商品（或勾选复选框）", kbOpen: "打开该行的补偿案件",
  kbTab: "下一个 / 上一个控件", kbTyping: "在输入框中打字时快捷键不起作用。",
  pick: "勾选", actions: "操作", pickRow: "勾选商品 {id}", replaySpeed: "回放速度",
  replayAt: "演练时刻", chartAlt: "商品 {products} 的偏差趋势", openCase: "打开案件 {id}",
  attachOpen: "接入一个秒杀…", attachTitle: "接入秒杀",
  attachWhereHint: "秒杀所在的位置。只读取；密码随配置存入系统钥匙串（没有钥匙串时不保存：连接时从 STOCKGUARD_MYSQL_PASSWORD、STOCKGUARD_REDIS_PASSWORD 和 STOCKGUARD_STATE_PASSWORD 读取）。",
  attachAmqpUrl: "RabbitMQ 地址（秒杀有队列时）", attachKeys: "抽样的键（SCAN 模式）",
  attachStateUrl: "状态库地址（Stockguard 自己的）", attachStatePassword: "状态库密码",
  attachRead: "读取秒杀", attachSaleName: "秒杀名称（状态库中）", attachStock: "库存",
  attachStockTable: "库存表", attachProductColumn: "商品列", attachRemaining: "剩余件数列",
  attachReserved: "锁定件数列（可选）", attachNameColumn: "商品名称列（可选）",
  attachInitialFrom: "初始库存", attachInitialBaseline: "未存储：保存时记录基线",
  attachInitialColumn: "某一列", attachInitialFixed: "所有商品同一个数",
  attachInitialValue: "初始库存列或数量", attachOrders: "订单", attachOrdersTable: "订单表",
  attachQuantity: "数量列", attachQuantityOne: "留空：每单一件", attachStatusColumn: "状态列",
  attachOrderId: "订单号列", attachCreated: "创建时间列", attachUser: "买家列",
  attachJoinTable: "父订单表", attachJoinOn: "指向父订单的列", attachJoinKey: "父订单主键列",
  attachStatusesCaption: "哪些状态占用库存：每个状态旁的订单数显示该标签的真实含义",
  attachStatusValue: "存储的状态值", attachStatusOrders: "订单数", attachStatusMeaning: "其库存",
  attachStatusLabel: "状态为 {value} 的订单如何处理其库存",
  attachAddStatus: "其他状态值（尚未出现的）", attachAdd: "添加该状态",
  attachAddStock: "添加库存表", attachAddOrders: "添加订单表", attachAddRedis: "添加 Redis 库存",
  sm_live: "占用", sm_reserving: "占用（锁定，未支付）", sm_released: "已归还",
  attachRedis: "Redis", attachKeyTemplate: "库存键模板", attachHashTotal: "哈希字段：总量",
  attachHashSold: "哈希字段：已售", attachBucketCount: "分桶数量键模板", attachBuyers: "买家集合模板（可选）",
  attachKeySample: "{key} = {value}", attachKeyMissing: "{key}：键不存在",
  attachInflight: "在途", attachSource: "已接受订单在哪里等待", attachSourceNone: "无：订单立即落库",
  attachSourceStream: "Redis 流", attachSourceRabbit: "RabbitMQ 队列", attachStream: "流的键",
  attachGroup: "消费者组", attachProductField: "表示商品的字段", attachOrderIdField: "表示订单的字段（可选）",
  attachQueue: "队列", attachManagementUrl: "管理 API（查看消费者未确认的消息）", attachDepth: "当前有 {n} 个已接受订单在途。",
  attachPreview: "预览：按此表单读取的前几个商品", attachReading: "正在读取秒杀…",
  attachPreviewBlocked: "请先修正标出的字段，再查看读数。",
  attachPreviewRead: "{at} 读取：共 {total} 个商品中的 {n} 个。",
  attachSaveAs: "保存为配置", attachReason: "原因（记录的基线写入审计日志）",
  attachSave: "保存适配文件和配置", attachProposed: "已抽样 {n} 个键。请逐项核对，先看状态。",
  attachSaved: "配置 {name} 已保存；适配文件为 {path}；已记录 {n} 条基线。",
  is_column: "列", is_number: "固定数", is_baseline: "基线", is_none: "尚无基线",
  ap_empty: "必填", ap_not_a_name: "{name} 不是普通的 SQL 名称（字母、数字、_ 和 $）",
  ap_no_placeholder: "{name} 没有标出商品的位置：请写 {id}", ap_not_a_number: "{name} 不是有效库存（须大于等于 0）",
  ap_no_table: "秒杀的数据库中没有表 {name}", ap_no_column: "该表没有列 {name}",
  ap_no_key: "前几个商品没有与 {name} 匹配的键", ap_no_stream: "秒杀的 Redis 中没有流 {name}",
  ap_no_group: "该流没有消费者组 {name}", ap_no_queue: "RabbitMQ 中没有队列 {name}",
  ap_unreachable: "无法访问 {name} 的 RabbitMQ", ap_no_products: "库存表中没有商品",
  ap_no_live_status: "请至少标出一个其订单占用库存的状态", ap_rule: "适配文件不允许：",
};

/** @type {Language} */
let lang = localStorage.getItem("stockguard.lang") === "zh" ? "zh" : "en";
/** @type {Array<() => void>} */
const listeners = [];

/** @type {Record<Language, { [K in MessageKey]?: string }>} */
const STRINGS = { en: EN, zh: ZH };

/**
 * Whether `key` is a key of the catalogue: for keys the window reads from its own HTML
 * (`data-i18n`), which `tsc` cannot see.
 * @param {string} key
 * @returns {key is MessageKey}
 */
export function isMessageKey(key) {
  return key in EN;
}

/**
 * A word that is not written in the code, so `tsc` cannot hold it to the catalogue: a
 * `data-i18n` attribute of the page, or a role, status or phase as a server stored it as text.
 * Its text when the catalogue has it, else the word itself.
 * @param {string} word
 */
export function said(word) {
  return isMessageKey(word) ? t(word) : word;
}

/**
 * A word of an open set a server records as text (a drill's phase, an invariant's name), by a
 * table of the words this window knows: its text, else the word as recorded.
 * @param {Record<string, MessageKey>} table
 * @param {string} word
 */
export function wordOf(table, word) {
  return Object.hasOwn(table, word) ? t(table[word]) : word;
}

/**
 * Appends to `select` one option per code of `table`, its value the code, said by its key
 * (`data-i18n`), so every language switch says it again.
 * @param {HTMLElement} select
 * @param {Record<string, MessageKey>} table
 */
export function appendOptions(select, table) {
  for (const [code, key] of Object.entries(table)) {
    const option = document.createElement("option");
    option.value = code;
    option.dataset.i18n = key;
    option.textContent = t(key);
    select.append(option);
  }
}

/**
 * An engine's breaker state as its heartbeat records it (text: CLOSED, OPEN, HALF_OPEN).
 * @type {Record<string, MessageKey>}
 */
export const BREAKER_STATES = { CLOSED: "br_CLOSED", OPEN: "br_OPEN", HALF_OPEN: "br_HALF_OPEN" };

/** @param {MessageKey} key @param {Record<string, string | number>} [vars] */
export function t(key, vars = {}) {
  const text = STRINGS[lang][key] ?? EN[key];
  return text.replace(/\{(\w+)\}/g, (_, /** @type {string} */ k) => String(vars[k] ?? ""));
}

/**
 * A time of day in the window's language (the system locale's would say "PM" in Chinese).
 * @param {Date} date
 */
export function clock(date) {
  return date.toLocaleTimeString(lang === "zh" ? "zh-CN" : "en-GB");
}

/**
 * The currency of a sale's prices. The core keeps amounts in cents (分) of one currency and
 * names none; the sales this console watches price in yuan, so it is named here, once.
 */
const CURRENCY = "CNY";

/**
 * An amount of money, given in cents, in the window's language with its currency ("¥12.50";
 * "CN¥12.50" in English, where "¥" alone could be yen).
 * @param {number} cents
 */
export function money(cents) {
  return new Intl.NumberFormat(lang === "zh" ? "zh-CN" : "en-GB", { style: "currency", currency: CURRENCY }).format(
    cents / 100,
  );
}

export function currentLanguage() {
  return lang;
}

/**
 * Called after every language switch, so screens can redraw what they computed.
 * @param {() => void} fn
 */
export function onLanguageChange(fn) {
  listeners.push(fn);
}

export function applyTranslations() {
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  // The selectors guarantee the attributes; only inputs carry a placeholder.
  for (const el of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll("[data-i18n]"))) {
    el.textContent = said(/** @type {string} */ (el.dataset.i18n));
  }
  for (const el of /** @type {NodeListOf<HTMLInputElement>} */ (document.querySelectorAll("[data-i18n-placeholder]"))) {
    el.placeholder = said(/** @type {string} */ (el.dataset.i18nPlaceholder));
  }
  // Accessible names of controls that show no text of their own, and frame titles.
  for (const el of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll("[data-i18n-label]"))) {
    el.setAttribute("aria-label", said(/** @type {string} */ (el.dataset.i18nLabel)));
  }
  for (const el of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll("[data-i18n-title]"))) {
    el.title = said(/** @type {string} */ (el.dataset.i18nTitle));
  }
  const toggle = byId("lang-toggle");
  toggle.textContent = t("langButton");
  // The button names the other language in that language.
  toggle.lang = lang === "zh" ? "en" : "zh-CN";
}

export function toggleLanguage() {
  lang = lang === "en" ? "zh" : "en";
  localStorage.setItem("stockguard.lang", lang);
  applyTranslations();
  for (const fn of listeners) fn();
}
