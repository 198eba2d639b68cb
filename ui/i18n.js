// Chinese and English for every visible string. `t(key, vars)` fills `{name}` placeholders.
import { byId } from "./dom.js";

/** @typedef {"en" | "zh"} Language */

/** @type {Record<Language, Record<string, string>>} */
const STRINGS = {
  en: {
    connecting: "Connecting…", readOnly: "read-only", langButton: "中文",
    navConnections: "Connections", navBoard: "Live board", navRepair: "Reconcile & rewrite", navAudit: "Audit",
    production: "PRODUCTION", staging: "STAGING", sandbox: "SANDBOX",
    oncall: "on-call", approver: "approver", facilitator: "facilitator", viewer: "viewer",
    profileName: "Name", environment: "Environment", role: "Role", mysqlUrl: "MySQL URL", redisUrl: "Redis URL",
    keyPrefix: "Key prefix", passwords: "Passwords in keychain", newProfile: "New profile", editProfile: "Edit profile {name}",
    replica: "replica", mysqlPassword: "MySQL password", replicaUrl: "Replica URL (optional)", replicaPassword: "Replica password",
    redisPassword: "Redis password", keepPassword: "blank: keep the stored one",
    passwordHint: "Passwords go to the OS keychain and are never shown again.",
    save: "Save", clearForm: "New", edit: "Edit", test: "Test", delete: "Delete", confirmDelete: "Really delete?",
    connectBtn: "Connect", active: "connected", saved: "Profile {name} saved.", deleted: "Profile {name} deleted.",
    probeOk: "{name}: MySQL {mysql} ms ({version}), Redis {redis} ms.", none: "none",
    redisLatency: "Redis", dbLatency: "DB", backlog: "Stream backlog", pendingReleases: "Pending releases",
    readTook: "Reading", boardUpdate: "Board update", lastTick: "Updated", allStatuses: "All statuses", searchPlaceholder: "Search id or name",
    OVERSOLD: "OVERSOLD", LEDGER_MISMATCH: "LEDGER_MISMATCH", KEY_MISSING: "KEY_MISSING",
    HISTORY_LOST: "HISTORY_LOST", REDIS_HIGH: "REDIS_HIGH", REDIS_LOW: "REDIS_LOW", OK: "OK",
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
    confirmTitle: "Production: confirm the rewrite",
    confirmHint: "Type each product id to confirm. Redis stock of these products will change.",
    typeId: "Type {id}", cancel: "Cancel", reasonRequired: "Give a reason: it goes to the audit log.",
    badIds: "Product ids are numbers separated by commas: {text}",
    allActions: "All actions", outcomePlaceholder: "Outcome (e.g. APPLIED)",
    auditSearchPlaceholder: "Target, actor or reason", refresh: "Refresh",
    at: "At", actor: "Actor", action: "Action", target: "Target", reasonShort: "Reason", details: "Details",
    profile: "Profile error", keychain: "Keychain error", connect: "Connection error", not_connected: "Not connected",
    query: "Query error", refused: "Refused", confirmation_required: "Confirmation required", invalid: "Check the input",
    chart: "Chart error", error: "Error",
    navDegrade: "Degrade", engineMode: "Mode", degradeTitle: "Degrade switch",
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
    phase_rig: "rig", phase_load: "load", phase_drain: "drain", phase_verify: "verify", phase_done: "done",
    RUNNING: "RUNNING", PASSED: "PASSED", FAILED: "FAILED", ABORTED: "ABORTED", HALTED: "HALTED", DEAD: "DEAD",
    inv_oversell: "No oversell", inv_redis_stock_negative: "Redis stock never negative",
    inv_drift_outside_faults: "No drift outside faults", inv_redis_stock_never_negative: "Redis stock never negative",
    inv_no_accepted_order_lost: "No accepted order lost", inv_no_duplicate_order: "No duplicate order",
    inv_no_drift_outside_faults: "No drift outside faults", inv_drift_zero_at_end: "Drift 0 at the end",
    inv_no_stale_rewrite: "No stale rewrite", inv_accepted_orders_always_found: "Accepted orders always found",
    inv_atEnd: "Lost and duplicated orders: checked at the end",
    ev_phase: "phase {phase}", ev_fault_injected: "fault on: {fault}", ev_fault_restored: "fault off: {fault}",
    ev_mode: "engines Redis/DB/neither {redis}/{db}/{unknown}", ev_repair: "{what}: {outcome}",
    ev_violation: "violated {invariant}: {figure}", ev_abort: "ABORT: {reason}", ev_halt: "HALT: {reason}", ev_note: "{text}",
    chartLoad: "Accepted and errors per second", chartDrift: "Drift (units)", chartBacklog: "Backlog and in flight",
    chartEngines: "Engines on Redis / on the DB", s_accepted: "accepted", s_errors: "errors", s_drift: "drift",
    s_worst: "worst product", s_backlog: "backlog", s_inflight: "in flight", s_redis: "on Redis", s_db: "on DB",
    pickTwo: "Tick exactly two runs to compare.",
    compareHead: "A: #{a} {sa} · B: #{b} {sb} · same drill file: {plan} · same requests: {schedule} · threshold {threshold}%",
    figure: "Figure", change: "Change", regressed: "REGRESSED", noRegression: "No regression.",
    regressions: "{n} regression(s): {list}", reportOf: "Report of run #{id}",
    runner: "Runner error",
  },
  zh: {
    connecting: "连接中…", readOnly: "只读", langButton: "English",
    navConnections: "连接", navBoard: "实时看板", navRepair: "对账与修正", navAudit: "审计",
    production: "生产环境", staging: "预发环境", sandbox: "沙箱环境",
    oncall: "值班工程师", approver: "审批人", facilitator: "演练主持", viewer: "只读用户",
    profileName: "名称", environment: "环境", role: "角色", mysqlUrl: "MySQL 地址", redisUrl: "Redis 地址",
    keyPrefix: "键前缀", passwords: "钥匙串中的密码", newProfile: "新建连接配置", editProfile: "编辑配置 {name}",
    replica: "只读副本", mysqlPassword: "MySQL 密码", replicaUrl: "只读副本地址（可选）", replicaPassword: "副本密码",
    redisPassword: "Redis 密码", keepPassword: "留空：保留已存密码",
    passwordHint: "密码保存在系统钥匙串中，不会再显示。",
    save: "保存", clearForm: "新建", edit: "编辑", test: "测试", delete: "删除", confirmDelete: "确认删除？",
    connectBtn: "连接", active: "已连接", saved: "配置 {name} 已保存。", deleted: "配置 {name} 已删除。",
    probeOk: "{name}：MySQL {mysql} 毫秒（{version}），Redis {redis} 毫秒。", none: "无",
    redisLatency: "Redis", dbLatency: "数据库", backlog: "消息积压", pendingReleases: "待回补",
    readTook: "读取耗时", boardUpdate: "看板刷新", lastTick: "更新于", allStatuses: "全部状态", searchPlaceholder: "按 ID 或名称搜索",
    OVERSOLD: "超卖", LEDGER_MISMATCH: "账目不平", KEY_MISSING: "键缺失",
    HISTORY_LOST: "Redis 历史丢失", REDIS_HIGH: "Redis 偏高", REDIS_LOW: "Redis 偏低", OK: "正常",
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
    confirmTitle: "生产环境：确认修正",
    confirmHint: "请逐个输入商品 ID 以确认。这些商品的 Redis 库存将被修改。",
    typeId: "输入 {id}", cancel: "取消", reasonRequired: "请填写原因：它会写入审计日志。",
    badIds: "商品 ID 须为逗号分隔的数字：{text}",
    allActions: "全部操作", outcomePlaceholder: "结果（如 APPLIED）",
    auditSearchPlaceholder: "对象、操作人或原因", refresh: "刷新",
    at: "时间", actor: "操作人", action: "操作", target: "对象", reasonShort: "原因", details: "详情",
    profile: "配置错误", keychain: "钥匙串错误", connect: "连接错误", not_connected: "未连接",
    query: "查询错误", refused: "已拒绝", confirmation_required: "需要确认", invalid: "请检查输入",
    chart: "图表错误", error: "错误",
    navDegrade: "降级", engineMode: "模式", degradeTitle: "降级开关",
    degradeHint: "数据库模式下订单直接写入数据库（不经过 Redis）。退出需按引导步骤：从数据库重建 Redis 期间会短暂暂停售卖。",
    scope: "范围", mode: "模式", revision: "版本", scopePlaceholder: "商品 id（留空：整场活动）",
    degradeOn: "开启数据库模式", degradeOff: "退出数据库模式（引导）", instance: "实例", listen: "地址",
    liveCol: "存活", breaker: "熔断器", took: "耗时", stale: "失联 {s} 秒",
    neverSet: "开关从未设置：所有商品均为 NORMAL。",
    ackLine: "版本 {revision}：{live} 个存活实例中 {applied} 个已生效{took}", ackTook: "，用时 {ms} 毫秒",
    ackNone: "版本 {revision}：没有存活的引擎实例。",
    exitConfirmTitle: "生产环境：确认引导退出", exitConfirmHint: "输入 {scope} 以重建 Redis 并退出数据库模式。",
    step_checked: "检查完成：Redis 可达；{products} 个商品；{live_instances} 个存活实例",
    step_paused: "已暂停售卖（版本 {revision}）：{live} 个实例中 {applied} 个已生效",
    step_drained: "在途预占已全部落库",
    step_rebuilt_sum: "已从数据库重建 {total} 个商品中 {n} 个的 Redis（买家计数与库存）；库存有变化：{changed}",
    step_resumed: "已恢复 NORMAL（版本 {revision}）：{live} 个实例中 {applied} 个已生效",
    step_verified: "已核验 {products} 个商品；仍有偏差：{drifting}",
    exitDone: "已回到 Redis（版本 {revision}）；暂停售卖 {ms} 毫秒；审计 {audit}。",
    NORMAL: "正常", DEGRADED: "降级", PAUSED: "暂停",
    navDrills: "故障演练", drillsTitle: "故障演练", drillLength: "时长", drillFull: "完整",
    drillShort: "缩短（×0.3）", drillShortest: "最短（×0.1）", drillExtraDb: "额外数据库延迟（毫秒）",
    drillStagingConfirm: "这是预发环境：仍然运行", drillRun: "开始演练", drillHalt: "叫停正在运行的演练…",
    drillHaltGo: "叫停", drillInvariants: "不变量", drillLog: "时间线", drillHistory: "演练记录",
    drillCompareHint: "勾选两次演练：先勾选的为基线 A", drillThreshold: "阈值 %",
    drillCompare: "对比", drillRunId: "编号", drillScenario: "演练", drillStarted: "开始", drillFinished: "结束",
    drillWhy: "原因", drillReport: "报告", drillReplay: "回放", drillWatch: "观察",
    drillAbout: "{description} 完整负载 {duration} 秒；故障：{faults}。",
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
    phase_rig: "搭建环境", phase_load: "加压", phase_drain: "排空", phase_verify: "核验", phase_done: "完成",
    RUNNING: "运行中", PASSED: "通过", FAILED: "未通过", ABORTED: "已中止", HALTED: "已叫停", DEAD: "已失联",
    inv_oversell: "无超卖", inv_redis_stock_negative: "Redis 库存从不为负",
    inv_drift_outside_faults: "故障窗口外无偏差", inv_redis_stock_never_negative: "Redis 库存从不为负",
    inv_no_accepted_order_lost: "已受理订单无丢失", inv_no_duplicate_order: "无重复订单",
    inv_no_drift_outside_faults: "故障窗口外无偏差", inv_drift_zero_at_end: "结束时偏差为 0",
    inv_no_stale_rewrite: "无过期修正写入", inv_accepted_orders_always_found: "已受理订单均可查到",
    inv_atEnd: "订单丢失与重复：结束时核验",
    ev_phase: "阶段：{phase}", ev_fault_injected: "注入故障：{fault}", ev_fault_restored: "恢复故障：{fault}",
    ev_mode: "引擎 Redis/数据库/两者皆非 {redis}/{db}/{unknown}", ev_repair: "{what}：{outcome}",
    ev_violation: "违反 {invariant}：{figure}", ev_abort: "中止：{reason}", ev_halt: "叫停：{reason}", ev_note: "{text}",
    chartLoad: "每秒成功与错误", chartDrift: "偏差（件）", chartBacklog: "积压与在途",
    chartEngines: "走 Redis / 走数据库的引擎", s_accepted: "成功", s_errors: "错误", s_drift: "偏差",
    s_worst: "最大单品", s_backlog: "积压", s_inflight: "在途", s_redis: "Redis", s_db: "数据库",
    pickTwo: "请恰好勾选两次演练进行对比。",
    compareHead: "A：#{a} {sa} · B：#{b} {sb} · 同一演练文件：{plan} · 同一请求序列：{schedule} · 阈值 {threshold}%",
    figure: "指标", change: "变化", regressed: "退化", noRegression: "无退化。",
    regressions: "{n} 项退化：{list}", reportOf: "演练 #{id} 报告",
    runner: "演练执行器错误",
  },
};

/** @type {Language} */
let lang = localStorage.getItem("stockguard.lang") === "zh" ? "zh" : "en";
/** @type {Array<() => void>} */
const listeners = [];

/** @param {string} key @param {Record<string, string | number>} [vars] */
export function t(key, vars = {}) {
  const text = STRINGS[lang][key] ?? STRINGS.en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (_, /** @type {string} */ k) => String(vars[k] ?? ""));
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
    el.textContent = t(/** @type {string} */ (el.dataset.i18n));
  }
  for (const el of /** @type {NodeListOf<HTMLInputElement>} */ (document.querySelectorAll("[data-i18n-placeholder]"))) {
    el.placeholder = t(/** @type {string} */ (el.dataset.i18nPlaceholder));
  }
  byId("lang-toggle").textContent = t("langButton");
}

export function toggleLanguage() {
  lang = lang === "en" ? "zh" : "en";
  localStorage.setItem("stockguard.lang", lang);
  applyTranslations();
  for (const fn of listeners) fn();
}
