//! Every label of the report, in Chinese and in English. The data (names, figures, notes,
//! reasons) is shown as recorded; only what the report itself says is translated.

use super::moment::MomentKind;
use crate::drills::summary::Check;
use crate::lang::Lang;

pub(super) struct Words {
    pub lang: Lang,
    pub report: &'static str,
    pub run: &'static str,
    pub status: &'static str,
    pub started: &'static str,
    pub finished: &'static str,
    pub started_by: &'static str,
    pub runner: &'static str,
    pub plan_hash: &'static str,
    pub seed: &'static str,
    pub schedule_hash: &'static str,
    pub variant: &'static str,
    pub reason: &'static str,
    pub none: &'static str,
    pub field: &'static str,
    pub plan_unreadable: &'static str,
    pub no_summary: &'static str,
    pub checks: &'static str,
    pub check: &'static str,
    pub kind: &'static str,
    pub verdict: &'static str,
    pub figure: &'static str,
    pub bound: &'static str,
    pub pass: &'static str,
    pub fail: &'static str,
    pub figures: &'static str,
    pub value: &'static str,
    pub charts: &'static str,
    pub x_axis: &'static str,
    pub fault_window: &'static str,
    pub throughput: &'static str,
    pub per_second: &'static str,
    pub accepted: &'static str,
    pub refused: &'static str,
    pub errors: &'static str,
    pub latency: &'static str,
    pub ms: &'static str,
    pub drift_title: &'static str,
    pub units: &'static str,
    pub drift: &'static str,
    pub drift_max_abs: &'static str,
    pub backlog_title: &'static str,
    pub backlog: &'static str,
    pub inflight: &'static str,
    pub mode_title: &'static str,
    pub engines: &'static str,
    pub redis_path: &'static str,
    pub db_path: &'static str,
    pub phases: &'static str,
    pub phase: &'static str,
    pub from_s: &'static str,
    pub to_s: &'static str,
    pub sent: &'static str,
    pub p99_max: &'static str,
    pub drift_peak: &'static str,
    pub backlog_peak: &'static str,
    pub db_path_max: &'static str,
    pub review: &'static str,
    pub trigger: &'static str,
    pub chain: &'static str,
    pub recovery: &'static str,
    pub follow_ups: &'static str,
    pub time_s: &'static str,
    pub what: &'static str,
    pub detail: &'static str,
    pub fault: &'static str,
    pub target: &'static str,
    pub action: &'static str,
    pub not_restored: &'static str,
    pub from_plan: &'static str,
    pub nothing: &'static str,
    pub notes_by: &'static str,
    pub facilitator: &'static str,
    pub failed_check: &'static str,
    pub affected: &'static str,
    pub order_no: &'static str,
    pub product: &'static str,
    pub user: &'static str,
    pub count: &'static str,
    pub why: &'static str,
}

const EN: Words = Words {
    lang: Lang::En,
    report: "Drill report",
    run: "Run",
    status: "Status",
    started: "Started",
    finished: "Finished",
    started_by: "Started by",
    runner: "Runner",
    plan_hash: "Drill file hash",
    seed: "Seed",
    schedule_hash: "Schedule hash",
    variant: "Variant",
    reason: "Reason",
    none: "—",
    field: "Field",
    plan_unreadable: "The drill file in the run's parameters could not be read",
    no_summary: "This run has no summary: it is still running, or its runner stopped without finishing.",
    checks: "Checks",
    check: "Check",
    kind: "Kind",
    verdict: "Verdict",
    figure: "Figure",
    bound: "Bound",
    pass: "PASS",
    fail: "FAIL",
    figures: "Figures",
    value: "Value",
    charts: "Charts",
    x_axis: "seconds since the load started",
    fault_window: "fault window",
    throughput: "Throughput and errors per second",
    per_second: "answers per second",
    accepted: "Accepted",
    refused: "Refused (sold out, limit)",
    errors: "Errors",
    latency: "Latency",
    ms: "milliseconds",
    drift_title: "Drift: Redis stock minus what it should be",
    units: "units",
    drift: "drift (sum)",
    drift_max_abs: "largest drift of one product",
    backlog_title: "Backlog and in flight",
    backlog: "backlog (messages)",
    inflight: "in flight (units)",
    mode_title: "Engines on each path",
    engines: "engines",
    redis_path: "Redis path",
    db_path: "DB path",
    phases: "Phases",
    phase: "Phase",
    from_s: "From (s)",
    to_s: "To (s)",
    sent: "Sent",
    p99_max: "Worst p99 (ms)",
    drift_peak: "Drift peak",
    backlog_peak: "Backlog peak",
    db_path_max: "Engines on the DB path (most)",
    review: "Review",
    trigger: "Trigger",
    chain: "Chain of impact",
    recovery: "Recovery",
    follow_ups: "Follow-ups",
    time_s: "Time (s)",
    what: "What",
    detail: "Detail",
    fault: "Fault",
    target: "Target",
    action: "Action",
    not_restored: "never restored",
    from_plan: "as planned (the timeline has no fault event)",
    nothing: "Nothing recorded.",
    notes_by: "Facilitator's notes by",
    facilitator: "facilitator",
    failed_check: "failed check",
    affected: "Orders that need compensation",
    order_no: "Order",
    product: "Product",
    user: "Buyer",
    count: "Units",
    why: "Why",
};

const ZH: Words = Words {
    lang: Lang::Zh,
    report: "演练报告",
    run: "运行编号",
    status: "状态",
    started: "开始时间",
    finished: "结束时间",
    started_by: "发起人",
    runner: "执行进程",
    plan_hash: "演练文件哈希",
    seed: "随机种子",
    schedule_hash: "请求序列哈希",
    variant: "变体",
    reason: "原因",
    none: "—",
    field: "项目",
    plan_unreadable: "无法读取本次运行参数中的演练文件",
    no_summary: "本次运行没有总结：仍在进行中，或执行进程未完成即已停止。",
    checks: "检查项",
    check: "检查",
    kind: "类别",
    verdict: "结论",
    figure: "实测",
    bound: "要求",
    pass: "通过",
    fail: "未通过",
    figures: "关键指标",
    value: "数值",
    charts: "图表",
    x_axis: "压测开始后的秒数",
    fault_window: "故障窗口",
    throughput: "每秒吞吐与错误",
    per_second: "每秒应答数",
    accepted: "下单成功",
    refused: "拒绝（售罄、限购）",
    errors: "错误",
    latency: "延迟",
    ms: "毫秒",
    drift_title: "漂移：Redis 库存与应有值之差",
    units: "件",
    drift: "漂移（合计）",
    drift_max_abs: "单个商品最大漂移",
    backlog_title: "积压与在途",
    backlog: "积压（消息）",
    inflight: "在途（件）",
    mode_title: "各路径上的引擎数",
    engines: "引擎数",
    redis_path: "Redis 路径",
    db_path: "数据库路径",
    phases: "阶段",
    phase: "阶段",
    from_s: "起（秒）",
    to_s: "止（秒）",
    sent: "发送",
    p99_max: "最差 p99（毫秒）",
    drift_peak: "漂移峰值",
    backlog_peak: "积压峰值",
    db_path_max: "数据库路径引擎数（最多）",
    review: "复盘",
    trigger: "触发",
    chain: "影响链",
    recovery: "恢复",
    follow_ups: "后续改进",
    time_s: "时间（秒）",
    what: "事件",
    detail: "详情",
    fault: "故障",
    target: "目标",
    action: "动作",
    not_restored: "未恢复",
    from_plan: "按计划（时间线中没有故障事件）",
    nothing: "无记录。",
    notes_by: "演练主持人备注，记录人",
    facilitator: "主持人",
    failed_check: "未通过的检查",
    affected: "需要补偿的订单",
    order_no: "订单号",
    product: "商品",
    user: "买家",
    count: "件数",
    why: "原因",
};

/// The runner's own phrases (`drill::runner`: checks' figures and bounds, repairs and their
/// outcomes) with their Chinese, longest first so that a phrase is replaced before its parts.
const RUNNER_PHRASES: &[(&str, &str)] = &[
    // Why an attempt of the guided exit failed (`switch::SwitchError`, as `lead_back` says it):
    // a breaker that trips late changes the rig's row between the exit's read and its pause.
    (
        " reservations are still in flight in Redis; the consumers did not persist them in time",
        " 个预留仍在 Redis 中处理，消费者未能及时写入数据库",
    ),
    ("these live engines still cannot reach Redis (breaker OPEN): ", "这些在线引擎仍无法连接 Redis（熔断器打开）："),
    ("; wait until they report HALF_OPEN", "；等它们报告 HALF_OPEN"),
    ("after the exit, Redis stock drifts from the DB for products ", "退出后以下商品的 Redis 库存与数据库不一致："),
    ("Redis does not answer, so the exit cannot start: ", "Redis 无应答，引导退出无法开始："),
    (" live instances in time", " 个在线实例及时应用"),
    (" was applied by only ", " 仅被 "),
    (" was changed meanwhile (now revision ", " 已被他人更改（当前修订 "),
    ("the scope was changed meanwhile to ", "该范围已被他人更改为 "),
    ("could not go back to DB mode (", "无法回到数据库模式（"),
    ("); the scope may still be PAUSED", "）；该范围可能仍为 PAUSED"),
    ("back in DB mode (revision ", "已回到数据库模式（修订 "),
    ("the guided exit failed: ", "引导退出失败："),
    ("; expected revision ", "；预期修订 "),
    ("): left as it is", "）：保持原样"),
    ("; left as it is", "；保持原样"),
    (" (revision ", "（修订 "),
    (" by \"", "，更改者 \""),
    // The proof checks' bounds and figures (`runner::verdict`, issue 51).
    (
        "each fault: a mode change, errors, latency, drift or backlog inside its window",
        "每个故障：其窗口内出现模式切换、错误、延迟、漂移或积压",
    ),
    (
        "did not bite (no mode change, errors, latency, drift or backlog in its window)",
        "未生效（其窗口内没有模式切换、错误、延迟、漂移或积压）",
    ),
    (" heard from (the file does not lead them back)", " 个均有心跳（演练文件不引导它们回到 Redis）"),
    ("no fault ran (the file has no [[faults]])", "没有运行任何故障（演练文件没有 [[faults]]）"),
    ("no fault ran: the file has no [[faults]]", "没有运行任何故障：演练文件没有 [[faults]]"),
    ("the rig's engines were not back at the end", "演练环境的引擎在结束时未恢复"),
    (" outside each fault's window and its ", "（在各故障窗口及其 "),
    (" inside the fault windows and their ", " 出现在故障窗口及其 "),
    (" accepted orders failed back", " 个已受理订单被撤回"),
    ("a fault did not take effect", "有故障未生效"),
    ("; and inconclusive: ", "；另外无结论："),
    (" ms (outside the faults ", " 毫秒（故障之外 "),
    ("% of its requests, ", "%，故障之外 "),
    ("% outside the faults)", "%）"),
    (" (outside the faults ", "（故障之外 "),
    (" s recovery allowance)", " 秒恢复余量内）"),
    (" s recovery allowance", " 秒恢复余量之外）"),
    (" unheard at the end", " 个结束时无心跳"),
    (" engines on the DB path", " 个引擎在数据库路径"),
    (" on the DB path, ", " 个在数据库路径，"),
    (" on the Redis path", " 个在 Redis 路径"),
    (" engines unheard", " 个引擎无心跳"),
    (" on Redis, ", " 个在 Redis 路径，"),
    (": never injected", "：从未注入"),
    (" buyer errors (", " 个买家错误（占其请求的 "),
    (" of the schedule", " 的计划请求"),
    (" units (peak ", " 件（峰值 "),
    ("inconclusive: ", "无结论："),
    ("backlog ", "积压 "),
    ("all ", "全部 "),
    // The variant of a run recorded before the report worded it from its parameters.
    (" ms on every MySQL reply", " 毫秒（每个 MySQL 应答）"),
    ("re-run of ", "重跑自运行 "),
    ("short x", "短版 x"),
    // A repair's outcome (`runner::repair`).
    ("rewrite failed: ", "重写失败："),
    (", drift after ", "，之后漂移 "),
    (" (delta ", "（变化 "),
    ("product ", "商品 "),
    // The runner's earlier phrases.
    ("guided exit to Redis", "引导退出回到 Redis"),
    ("fenced rewrite", "带栅栏的重写"),
    ("instances not back on Redis", "个实例未回到 Redis"),
    ("products rebuilt", "个商品已重建"),
    ("sales paused", "暂停销售"),
    ("ticks after the failover", "次采样（故障切换后）"),
    ("looks answered not found", "次查询答复未找到"),
    ("not reached", "未达到"),
    (" units beyond stock", " 件超出库存"),
    (" products below zero in Redis beyond the releases owed", " 个商品的 Redis 库存低于零（超出待归还的释放）"),
    // How a report stored before the releases owed were counted says it.
    (" products below zero in Redis", " 个商品的 Redis 库存低于零"),
    (" against ", "，要求 "),
    ("drift ", "漂移 "),
    ("never", "从未"),
    ("failed: ", "失败："),
    (" units", " 件"),
    (" ticks", " 次采样"),
    (" sent", " 已发送"),
    (" of ", " / "),
    (", ", "，"),
];

pub(super) fn of(lang: Lang) -> &'static Words {
    match lang {
        Lang::En => &EN,
        Lang::Zh => &ZH,
    }
}

impl Words {
    fn zh(&self) -> bool {
        self.lang == Lang::Zh
    }

    /// The one of a pair of labels in this language.
    fn pick(&self, (en, zh): (&'static str, &'static str)) -> &'static str {
        if self.zh() {
            zh
        } else {
            en
        }
    }

    /// A run's status (`PASSED`, ..., `DEAD`) as a word, with the code kept for a search.
    pub fn status_word(&self, code: &str) -> String {
        let word = match (self.lang, code) {
            (Lang::En, "DEAD") => "DEAD (its runner stopped without finishing)",
            (Lang::En, "INCONCLUSIVE") => "INCONCLUSIVE (nothing broke, but nothing was proved)",
            (Lang::En, code) => return code.to_string(),
            (Lang::Zh, "PASSED") => "通过",
            (Lang::Zh, "FAILED") => "未通过",
            (Lang::Zh, "INCONCLUSIVE") => "无结论（未违反不变量，但未证明故障生效或引擎恢复）",
            (Lang::Zh, "ABORTED") => "已中止",
            (Lang::Zh, "HALTED") => "已叫停",
            (Lang::Zh, "RUNNING") => "进行中",
            (Lang::Zh, "DEAD") => "已失联（执行进程未完成即停止）",
            (Lang::Zh, code) => return code.to_string(),
        };
        if self.zh() {
            format!("{word} ({code})")
        } else {
            word.to_string()
        }
    }

    /// A check's kind: `invariant`, `slo` or `proof` (the run proved something).
    pub fn check_kind<'a>(&self, kind: &'a str) -> &'a str {
        match (self.lang, kind) {
            (Lang::Zh, "invariant") => "不变量",
            (Lang::Zh, "proof") => "证明",
            (Lang::En, "invariant") => "invariant",
            (_, "slo") => "SLO",
            (_, other) => other,
        }
    }

    pub fn verdict(&self, passed: bool) -> &'static str {
        if passed {
            self.pass
        } else {
            self.fail
        }
    }

    /// The label of a figure, by its field name in the summary.
    pub fn figure_name(&self, key: &str) -> &'static str {
        self.pick(match key {
            "sent" => ("Requests sent", "发送请求数"),
            "skipped" => ("Not sent: generator a second behind", "未发送：压测端落后超过 1 秒"),
            "accepted" => ("Orders accepted", "成功下单数"),
            "oversold_units" => ("Units oversold (must be 0)", "超卖件数（必须为 0）"),
            "lost" => ("Orders lost (must be 0)", "丢失订单（必须为 0）"),
            "duplicated" => ("Orders duplicated (must be 0)", "重复订单（必须为 0）"),
            "failed_back" => ("Accepted, then withdrawn", "受理后撤回"),
            "unannounced_orders" => ("Ordered, though the buyer heard an error", "买家收到错误但订单已生成"),
            "buyer_error_rate" => ("Buyer error rate", "买家错误率"),
            "p50_ms" => ("Latency p50 (ms)", "延迟 p50（毫秒）"),
            "p99_ms" => ("Latency p99 (ms)", "延迟 p99（毫秒）"),
            "time_to_db_path_ms" => ("Time to the DB path (ms)", "切换到数据库路径用时（毫秒）"),
            "recovery_s" => ("Recovery (s)", "恢复用时（秒）"),
            "drift_peak" => ("Drift peak (units)", "漂移峰值（件）"),
            "backlog_peak" => ("Backlog peak (messages)", "积压峰值（消息）"),
            "catch_up_multiple" => ("Backlog catch-up multiple", "积压追赶倍数"),
            "switch_propagation_ms" => ("Switch propagation (ms)", "开关生效传播用时（毫秒）"),
            "stale_writes" => ("Stale writes let through (must be 0)", "过期写入（必须为 0）"),
            "drift_confirmed_ticks" => ("Ticks to confirm the drift", "确认漂移所需采样次数"),
            "status_not_found" => ("Accepted orders answered not found (must be 0)", "已受理订单查询不到（必须为 0）"),
            _ => ("?", "?"),
        })
    }

    pub fn moment(&self, kind: MomentKind) -> &'static str {
        use MomentKind::*;
        self.pick(match kind {
            FirstDbPath => ("first engine on the DB path", "首个引擎切到数据库路径"),
            AllOnDbPath => ("every engine on the DB path", "全部引擎切到数据库路径"),
            WorstErrorSecond => ("worst second for buyers", "买家错误最多的一秒"),
            PeakDrift => ("peak drift", "漂移峰值"),
            PeakBacklog => ("peak backlog", "积压峰值"),
            FirstViolation => ("first invariant violated", "首次违反不变量"),
            Abort => ("drill aborted", "演练中止"),
            Halt => ("drill halted", "演练被叫停"),
            Repair => ("repair", "修复操作"),
            FaultRestored => ("fault restored", "故障解除"),
            BackOnRedis => ("every engine back on Redis", "全部引擎回到 Redis 路径"),
            DriftSettled => ("drift back to 0", "漂移归零"),
        })
    }

    /// A run's phase (`rig`, `load`, `drain`, `verify`, `done`) as a word.
    pub fn phase_name(&self, phase: &str) -> String {
        let zh = match phase {
            "rig" => "搭建演练环境",
            "load" => "压测",
            "drain" => "排空",
            "verify" => "核验",
            "done" => "结束",
            other => return other.to_string(),
        };
        if self.zh() {
            zh.to_string()
        } else {
            phase.to_string()
        }
    }

    /// What the runner wrote in words of its own (a check's figure and bound, a repair and
    /// its outcome), in this language: the numbers and identifiers as written, its phrases
    /// translated.
    pub fn runner_text(&self, text: &str) -> String {
        if !self.zh() {
            return text.to_string();
        }
        RUNNER_PHRASES.iter().fold(text.to_string(), |t, (en, zh)| t.replace(en, zh))
    }

    /// The follow-up a failed check asks for.
    pub fn fix_check(&self, check: &Check) -> String {
        if self.zh() {
            let (figure, bound) = (self.runner_text(&check.figure), self.runner_text(&check.bound));
            format!("{}：实测 {figure}，要求 {bound}。查明原因，在下次演练前修复。", check.name)
        } else {
            format!(
                "{}: measured {} against {}. Find the cause and fix it before the next run.",
                check.name, check.figure, check.bound
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runners_redis_below_zero_phrase_is_chinese_in_both_its_old_and_its_new_wording() {
        let zh = of(Lang::Zh);
        assert_eq!(
            zh.runner_text("redis_stock_negative: 2 products below zero in Redis beyond the releases owed"),
            "redis_stock_negative: 2 个商品的 Redis 库存低于零（超出待归还的释放）"
        );
        assert_eq!(
            zh.runner_text("redis_stock_negative: 2 products below zero in Redis"),
            "redis_stock_negative: 2 个商品的 Redis 库存低于零"
        );
    }

    /// Two English words in a row: what a sentence left in English looks like.
    fn english_pairs(text: &str) -> Vec<String> {
        let words: Vec<Option<&str>> = text
            .split_whitespace()
            .map(|t| t.trim_matches(|c: char| c.is_ascii_punctuation() || !c.is_ascii()))
            .map(|w| (w.len() >= 2 && w.chars().all(|c| c.is_ascii_alphabetic())).then_some(w))
            .collect();
        words.windows(2).filter_map(|two| Some(format!("{} {}", two[0]?, two[1]?))).collect()
    }

    #[test]
    fn why_an_attempt_of_the_guided_exit_failed_is_said_in_chinese() {
        use crate::switch::{Mode, Scope, ScopeLeft, SwitchError};
        let late_breaker = SwitchError::ChangedMeanwhile {
            scope: Scope::Rig(1),
            expected: 0,
            found: 2,
            mode: Mode::Degraded,
            changed_by: "breaker:drill1-e1".into(),
        };
        let failures = [
            late_breaker.to_string(),
            SwitchError::InstancesCannotReachRedis(vec!["drill1-e2".into()]).to_string(),
            SwitchError::NotAcknowledged { revision: 4, applied: 2, live: 3 }.to_string(),
            SwitchError::ExitFailed {
                cause: Box::new(SwitchError::NotDrained(7)),
                left: ScopeLeft::BackInDbMode { revision: 5 },
            }
            .to_string(),
            SwitchError::ExitFailed {
                cause: Box::new(SwitchError::DriftAfterExit(vec![])),
                left: ScopeLeft::ChangedMeanwhile { revision: 6, mode: Mode::Degraded, changed_by: "ops".into() },
            }
            .to_string(),
        ];
        let zh = of(Lang::Zh);
        for failure in failures {
            let said = zh.runner_text(&format!("failed: {failure}"));
            assert!(english_pairs(&said).is_empty(), "{failure}\n  -> {said}: {:?}", english_pairs(&said));
        }
        assert_eq!(
            zh.runner_text("failed: rig:1 was changed meanwhile (now revision 2, DEGRADED by \"breaker:drill1-e1\"; expected revision 0): left as it is"),
            "失败：rig:1 已被他人更改（当前修订 2，DEGRADED，更改者 \"breaker:drill1-e1\"；预期修订 0）：保持原样"
        );
    }

    #[test]
    fn the_runners_phrases_are_longest_first_so_no_phrase_is_cut_by_a_part_of_it() {
        for (i, (earlier, _)) in RUNNER_PHRASES.iter().enumerate() {
            for (later, _) in &RUNNER_PHRASES[i + 1..] {
                assert!(!later.contains(earlier), "{earlier:?} comes before {later:?}, which holds it");
            }
        }
    }
}
