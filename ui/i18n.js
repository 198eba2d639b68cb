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
