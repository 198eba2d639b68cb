// What Rust tells the window, said in the window's language: errors arrive typed
// ({ kind, code, params, message }, src-tauri/src/error.rs) and connection notices as a tagged
// union (`Notice`, stockguard-core's profile::resolve). Each code has an English and a Chinese
// template here; the tables are typed by the generated codes, so a code added in Rust fails
// the type check (scripts/typecheck-ui.sh) until both templates exist. Never a match on text.
//
// `detail` is what a server or the OS said verbatim (a MySQL error, an I/O error): not
// translatable, so it is shown apart from the sentence, marked as English (lang="en").
import { t, said, isMessageKey, currentLanguage } from "./i18n.js";

/** @typedef {import("./types").MessageCode} MessageCode */
/** @typedef {import("./types").ErrorKind} ErrorKind */
/** @typedef {import("./i18n.js").MessageKey} MessageKey */
/** @typedef {import("./types").Notice} Notice */
/** @typedef {{ en: string, zh: string }} Template */

/** @type {Record<Exclude<MessageCode, "other">, Template>} */
const ERRORS = {
  not_connected: {
    en: "not connected: pick a profile on the Connections screen and press Connect",
    zh: "尚未连接：请在“连接”页选择一个配置并点击“连接”",
  },
  no_product_picked: { en: "pick at least one product on the board", zh: "请先在看板上至少勾选一个商品" },
  alert_already_acknowledged: { en: "alert {alert} is already acknowledged", zh: "告警 {alert} 已被确认" },
  alert_not_firing: { en: "no alert {alert} is firing now", zh: "告警 {alert} 当前未触发" },
  invalid_thresholds: {
    en: "invalid alert thresholds: the backlog must be 0 or more and the open breakers 1 or more",
    zh: "告警阈值无效：积压须大于等于 0，熔断引擎数须大于等于 1",
  },
  ack_too_short: { en: "an acknowledgement lasts at least one minute", zh: "确认至少持续一分钟" },
  reason_required: { en: "a reason is required (it goes to the audit log)", zh: "必须填写原因（会写入审计日志）" },
  notes_required: {
    en: "the review notes are empty: write what the team takes away from the run",
    zh: "复盘记录为空：请写下团队从本次演练中得到的结论",
  },
  confirm_product: {
    en: "production: type the product id {product} to confirm the rewrite",
    zh: "生产环境：请输入商品 ID {product} 以确认修正",
  },
  confirm_scope: { en: "production: confirm by typing the scope {scope}", zh: "生产环境：请输入范围 {scope} 以确认" },
  confirm_case: {
    en: "type the case id {case} to confirm: execution cancels orders and writes refunds",
    zh: "请输入案件编号 {case} 以确认：执行会取消订单并写入退款",
  },
  refused_read_only: {
    en: "this profile is read-only: it may not {action}",
    zh: "此配置为只读：不能{action}",
  },
  refused_role: {
    en: "the {role} role may not {action}; {allowed} may",
    zh: "{role}角色不能{action}；{allowed}可以",
  },
  drill_refused_production: {
    en: "drills are refused on production profiles",
    zh: "生产环境禁止演练",
  },
  drill_refused_staging: {
    en: "this profile is staging: confirm it to run a drill on it",
    zh: "这是预发环境：确认后才能运行演练",
  },
  unknown_profile: { en: "unknown profile {name} (known: {known})", zh: "未知配置 {name}（已有：{known}）" },
  no_profile: {
    en: "no profile chosen: create one on this screen, or start a local sandbox (stockguard sandbox up)",
    zh: "未选择配置：请在本页新建一个，或启动本地沙箱（stockguard sandbox up）",
  },
  invalid_profile_name: {
    en: "invalid profile name {name}: use letters, digits, - and _ (at most 64)",
    zh: "配置名称 {name} 无效：只能使用字母、数字、- 和 _（最多 64 个）",
  },
  choose_environment: {
    en: "choose the profile's environment: production, staging or sandbox",
    zh: "请选择配置的环境：生产、预发或沙箱",
  },
  malformed_url: { en: "malformed {what} URL {url}", zh: "{what} 地址格式错误：{url}" },
  password_in_url: {
    en: "the {what} URL of a profile must not hold a password; type it in the password field (it goes to the keychain)",
    zh: "配置的 {what} 地址中不能包含密码；请填在密码栏（它会保存到系统钥匙串）",
  },
  invalid_key_prefix: {
    en: "invalid key prefix {prefix}: use 1-32 letters, digits, - or _",
    zh: "键前缀 {prefix} 无效：请使用 1-32 个字母、数字、- 或 _",
  },
  profiles_file: { en: "the profiles file {path} cannot be used", zh: "无法使用配置文件 {path}" },
  no_config_dir: {
    en: "no config directory for this user; set STOCKGUARD_CONFIG_DIR",
    zh: "当前用户没有配置目录；请设置 STOCKGUARD_CONFIG_DIR",
  },
  no_keychain: {
    en: "the OS keychain is not available here and {env_var} is not set: set {env_var} to give the {slot} password",
    zh: "此处没有系统钥匙串，且未设置 {env_var}：请设置 {env_var} 提供 {slot} 密码",
  },
  missing_secret: {
    en: "the {slot} password of profile {profile} is not in the keychain: save the profile again with its password",
    zh: "配置 {profile} 的 {slot} 密码不在钥匙串中：请填写密码后重新保存该配置",
  },
  password_not_in_environment: {
    en: "profile {profile} takes its {slot} password from {env_var}, which is not set: set {env_var} before starting the console",
    zh: "配置 {profile} 的密码由环境变量 {env_var} 提供，但它未设置：请在启动控制台前设置 {env_var}",
  },
  keychain_failed: { en: "the keychain failed for the {slot} password", zh: "钥匙串处理 {slot} 密码时出错" },
  mysql_unreachable: {
    en: "cannot reach MySQL at {url} (is the server running?)",
    zh: "无法连接 MySQL（{url}）：服务器是否在运行？",
  },
  mysql_access_denied: { en: "MySQL at {url} refused the credentials", zh: "MySQL（{url}）拒绝了账号或密码" },
  mysql_unknown_database: {
    en: "MySQL at {url} has no such database (create it, then stockguard migrate)",
    zh: "MySQL（{url}）上没有该数据库（请先创建，再执行 stockguard migrate）",
  },
  redis_unreachable: {
    en: "cannot reach Redis at {url} (is the server running?)",
    zh: "无法连接 Redis（{url}）：服务器是否在运行？",
  },
  connect_failed: { en: "the connection failed", zh: "连接失败" },
  query_failed: { en: "a query failed", zh: "查询失败" },
  exit_redis_unreachable: {
    en: "Redis does not answer, so the exit cannot start",
    zh: "Redis 无响应，无法开始退出",
  },
  instances_cannot_reach_redis: {
    en: "these live engines still cannot reach Redis (breaker OPEN): {instances}; wait until they report HALF_OPEN",
    zh: "以下存活引擎仍连不上 Redis（熔断 OPEN）：{instances}；请等到它们报告 HALF_OPEN",
  },
  not_acknowledged: {
    en: "revision {revision} was applied by only {applied} of {live} live instances in time",
    zh: "版本 {revision} 仅有 {live} 个存活实例中的 {applied} 个按时生效",
  },
  not_drained: {
    en: "{n} reservations are still in flight in Redis; the consumers did not persist them in time",
    zh: "Redis 中仍有 {n} 个在途预占；消费者未能按时落库",
  },
  rewrite_not_clean: {
    en: "the rewrite of product {product} ended {outcome}; Redis stock was not rebuilt",
    zh: "商品 {product} 的修正结果为 {outcome}；Redis 库存未重建",
  },
  changed_meanwhile: {
    en: "{scope} was changed meanwhile (now revision {found}, {mode} by {by}; expected revision {expected}): left as it is",
    zh: "{scope} 已被他人修改（现为版本 {found}，{by} 设为 {mode}；预期版本 {expected}）：保持不变",
  },
  drift_after_exit: {
    en: "after the exit, Redis stock drifts from the DB for products {products}",
    zh: "退出后，商品 {products} 的 Redis 库存与数据库仍有偏差",
  },
  exit_failed: { en: "the guided exit failed", zh: "引导退出失败" },
  switch_read_timed_out: {
    en: "the degrade switch could not be read within {ms} ms",
    zh: "{ms} 毫秒内未能读取降级开关",
  },
  no_such_run: { en: "drill run {run} does not exist", zh: "演练 {run} 不存在" },
  run_finished: { en: "drill run {run} has already finished", zh: "演练 {run} 已经结束" },
  drill_running: {
    en: "drill run {run} ({scenario}, started by {by}) is running on this sale: one drill at a time",
    zh: "演练 {run}（{scenario}，由 {by} 发起）正在此秒杀上运行：一次只能运行一个演练",
  },
  drill_starting: {
    en: "another drill is starting on this sale right now; try again in a moment",
    zh: "另一个演练正在此秒杀上启动，请稍后再试",
  },
  bad_short: { en: "the short factor must be above 0 and at most 1, not {value}", zh: "缩短系数须大于 0 且不超过 1，而不是 {value}" },
  bad_threshold: { en: "the threshold is a share of 0 or more, not {value}", zh: "阈值须为 0 或以上的比例，而不是 {value}" },
  drill_plan: { en: "the drill file cannot be used", zh: "演练文件无法使用" },
  runner_missing: {
    en: "the stockguard binary that runs drills is not at {path}",
    zh: "运行演练的 stockguard 程序不在 {path}",
  },
  runner_failed: { en: "the drill runner did not start its run", zh: "演练执行器未能开始运行" },
  no_such_case: { en: "no compensation case {case}", zh: "没有补偿案件 {case}" },
  no_such_product: { en: "no product {product}", zh: "没有商品 {product}" },
  nothing_to_compensate: {
    en: "product {product} has nothing to compensate: no unit beyond stock and no withdrawn order",
    zh: "商品 {product} 无需补偿：没有超出库存的件数，也没有撤回的订单",
  },
  choose_compensation: {
    en: "choose what the oversold or the withdrawn lines get",
    zh: "请选择超卖或撤回订单的处理方式",
  },
  bad_plan: { en: "the plan cannot be used", zh: "该方案无法使用" },
  compensation_refused: { en: "the database refused this step", zh: "数据库拒绝了此步骤" },
  write_failed: { en: "cannot write {path}", zh: "无法写入 {path}" },
  chart_no_products: { en: "no product chosen: pick at least one product to chart", zh: "未选择商品：请至少勾选一个商品" },
  chart_bad_size: {
    en: "the chart size {width}x{height} is not drawable",
    zh: "图表尺寸 {width}x{height} 无法绘制",
  },
  chart_failed: { en: "drawing the chart failed", zh: "绘制图表失败" },
  // The core's words (stockguard_core::sale::Refusal), held by the desktop's test
  // `the_window_says_a_refusal_in_the_cores_words`.
  adapter_no_drills: {
    en: 'a fault drill is not for the sale "{sale}", read over its adapter file: drills run against a sale our engine runs; run them in the sandbox',
    zh: "演练不适用于通过适配器文件读取的销售「{sale}」：演练只能针对本引擎运行的销售，请在沙箱中运行。",
  },
  adapter_no_ledger_check: {
    en: 'the ledger check is not for the sale "{sale}", read over its adapter file: the ledger check reads our own orders and outbox; over an adapter every reading judges the sale\'s ledger (LEDGER_MISMATCH)',
    zh: "账本核对不适用于通过适配器文件读取的销售「{sale}」：账本核对读取本系统自己的订单表和发件箱；通过适配器时，每次读数都会判断该销售的账本（账本不符）。",
  },
  adapter_no_switch: {
    en: 'the degrade switch of the sale "{sale}", read over its adapter file, is not in the window yet: the CLI\'s `stockguard degrade on|off` switches the sale\'s own flag, where the adapter file has a [switch] section',
    zh: "窗口暂不能切换通过适配器文件读取的销售「{sale}」的降级开关：命令行的 `stockguard degrade on|off` 可以切换该销售自身的开关（适配器文件须有 [switch] 段）。",
  },
  adapter_no_rewrite: {
    en: 'the repair of Redis stock of the sale "{sale}", read over its adapter file, is not in the window yet: the CLI\'s `stockguard rewrite --product N` repairs a settled drift (its dry run first), where the adapter file allows it',
    zh: "窗口暂不能修正通过适配器文件读取的销售「{sale}」的 Redis 库存：命令行的 `stockguard rewrite --product N` 可修正已稳定的偏差（先做试运行，须适配器文件允许）。",
  },
  adapter_no_burndown: {
    en: 'the burn-down is not for the sale "{sale}", read over its adapter file: the burn-down reads our own orders table',
    zh: "库存消耗图不适用于通过适配器文件读取的销售「{sale}」：库存消耗图读取本系统自己的订单表。",
  },
  adapter_no_rights: {
    en: 'managing roles is not for the sale "{sale}", read over its adapter file: roles grant rights on our own tables and keys; a sale read over an adapter keeps its own accounts',
    zh: "角色管理不适用于通过适配器文件读取的销售「{sale}」：角色授予的是本系统自己表和键的权限；通过适配器读取的销售使用其自己的账户。",
  },
  adapter_no_state_db: {
    en: "This needs the state database, where Stockguard keeps its own records for a sale it did not build: set the profile's state database.",
    zh: "此操作需要状态数据库（Stockguard 为非本系统构建的销售保存自身记录之处）：请为该配置设置状态数据库。",
  },
  adapter_failed: { en: "reading the sale through its adapter failed", zh: "通过适配器读取销售失败" },
};

/** @type {{ [C in Notice["code"]]: Template }} */
const NOTICES = {
  sandbox_by_default: {
    en: "No profile chosen: connected to the sandbox profile.",
    zh: "未选择配置：已连接沙箱配置 sandbox。",
  },
  overridden_is_production: {
    en: "{overrides} replace profile {profile}'s connection, so it is treated as production, not {label}; set STOCKGUARD_ENVIRONMENT to label it.",
    zh: "{overrides} 替换了配置 {profile} 的连接，因此按生产环境处理（而非{label}）；可设置 STOCKGUARD_ENVIRONMENT 指定环境。",
  },
  password_from_environment: {
    en: "No OS keychain here: the {slot} password was taken from {env_var}.",
    zh: "此处没有系统钥匙串：{slot} 密码取自 {env_var}。",
  },
};

// Parameters that are words of ours (roles, environments, modes), said in the language too.
const WORDS = new Set(["role", "label", "mode", "action"]);
// Lists of our words (`allowed`: the roles that may), joined in the language's way.
const WORD_LISTS = new Set(["allowed"]);

/**
 * @param {Template} template
 * @param {Record<string, unknown>} params
 */
function fill(template, params) {
  const text = template[currentLanguage()];
  return text.replace(/\{(\w+)\}/g, (_, /** @type {string} */ k) => {
    const v = params[k];
    const s = Array.isArray(v) ? v.join(", ") : String(v ?? "");
    if (WORD_LISTS.has(k)) return s.split(",").map((w) => said(w)).join(currentLanguage() === "zh" ? "、" : " and ");
    return WORDS.has(k) ? said(s) : s;
  });
}

/** The heading of each kind of error (src-tauri's `ErrorKind`, and the window's "error"). */
/** @type {Record<ErrorKind | "error", MessageKey>} */
const KINDS = {
  profile: "profile",
  keychain: "keychain",
  connect: "connect",
  not_connected: "not_connected",
  query: "query",
  refused: "refused",
  confirmation_required: "confirmation_required",
  invalid: "invalid",
  chart: "chart",
  runner: "runner",
  error: "error",
};

/** A kind's heading; a kind this window does not know (a newer Rust's) as it is. @param {string} kind */
function kindText(kind) {
  return kind in KINDS ? t(KINDS[/** @type {keyof typeof KINDS} */ (kind)]) : kind;
}

/** Between an error's heading and its sentence. @param {string} kind */
function heading(kind) {
  return `${kindText(kind)}${currentLanguage() === "zh" ? "：" : ": "}`;
}

/**
 * An error the window makes itself, said by a key of the catalogue in the language of the
 * moment it is shown.
 * @param {MessageKey} key
 * @param {Record<string, string | number>} [vars]
 */
export function invalid(key, vars = {}) {
  return { kind: "invalid", key, vars };
}

/**
 * What an error says: the sentence in the window's language, and the verbatim detail (or
 * null). The window's own errors are { kind, key, vars } (a key of i18n.js, see `invalid`).
 * @param {unknown} err a DesktopError from Rust, an Error, or anything thrown
 * @returns {{ kind: string, code: string | null, text: string, detail: string | null }}
 */
export function describeError(err) {
  const o = /** @type {Record<string, unknown>} */ (typeof err === "object" && err ? err : {});
  const kind = typeof o.kind === "string" ? o.kind : "error";
  const message = "message" in o ? String(o.message ?? "") : String(err);
  const code = typeof o.code === "string" ? o.code : null;
  const params = /** @type {Record<string, string>} */ (typeof o.params === "object" && o.params ? o.params : {});
  const template = code && code in ERRORS ? ERRORS[/** @type {keyof typeof ERRORS} */ (code)] : null;
  if (template) {
    return { kind, code, text: `${heading(kind)}${fill(template, params)}`, detail: params.detail ?? null };
  }
  if (code) return { kind, code, text: kindText(kind), detail: message || null };
  // Made by the window: a key of i18n.js, said in the language of the moment.
  if (typeof o.key === "string") {
    const vars = /** @type {Record<string, string | number>} */ (typeof o.vars === "object" && o.vars ? o.vars : {});
    return { kind, code, text: `${heading(kind)}${isMessageKey(o.key) ? t(o.key, vars) : o.key}`, detail: null };
  }
  return { kind, code, text: message ? `${heading(kind)}${message}` : kindText(kind), detail: null };
}

/** @typedef {import("./types").Reason} Reason */

/** Why a right is refused or unknown (roles/rights.rs `Reason`), by its tag. */
/** @type {Record<Reason["reason"], Template>} */
const REASONS = {
  mysql_privilege: { en: "MySQL account {account} has no {privilege} on {table}", zh: "MySQL 账号 {account} 对 {table} 没有 {privilege} 权限" },
  grants_unknown: { en: "unknown, MySQL would not show the account's grants", zh: "未知：MySQL 不肯列出该账号的权限" },
  redis_refused: { en: "Redis user {user} may not {command}", zh: "Redis 用户 {user} 不能执行 {command}" },
  redis_who_unknown: { en: "unknown, the Redis user cannot run ACL WHOAMI", zh: "未知：该 Redis 用户不能执行 ACL WHOAMI" },
  redis_unknown: { en: "unknown, Redis would not say whether {command} is allowed", zh: "未知：Redis 不肯说明是否允许 {command}" },
};

/**
 * A reason in the window's language. What a server said (`detail`) is left out: the
 * sentence says what the user can act on.
 * @param {Reason} reason
 */
export function reasonText(reason) {
  return fill(REASONS[reason.reason], /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (reason)));
}

/** @param {Notice} notice */
export function noticeText(notice) {
  return fill(NOTICES[notice.code], notice);
}
