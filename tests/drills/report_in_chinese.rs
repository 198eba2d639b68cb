//! The Chinese report of a real run says every sentence in Chinese (issue 51, item 7): the
//! variant of the run, the checks' figures and bounds the runner wrote, the faults by their
//! Chinese names (the variant's own fault too), the reason. It had left the variant sentence,
//! the load's figures and the variant's fault in English. Names, codes and figures stay as
//! written; what is checked is that no two English words follow each other, which is what a
//! sentence left in English looks like.

use sqlx::MySqlPool;
use stockguard_core::drills::report::{self, Format};
use stockguard_core::lang::Lang;
use stockguard_core::profile::EnvironmentKind;
use stockguard_engine::drill::runner::{self, Variant};

use crate::rig;
use crate::support::{self, TestRedis};

/// Two English words in a row (after the punctuation around them), each as found: what a
/// sentence left in English looks like. A word is two ASCII letters or more and nothing else,
/// so a figure (`x0.75`, `p99`), a code (`db_path=0`, `load_sent_as_planned`) or a name with a
/// dash (`redis-cut`) is none.
fn english_pairs(text: &str) -> Vec<String> {
    let word = |token: &str| {
        let bare = token.trim_matches(|c: char| c.is_ascii_punctuation() || !c.is_ascii());
        (bare.len() >= 2 && bare.chars().all(|c| c.is_ascii_alphabetic())).then_some(bare.to_string())
    };
    let mut pairs = Vec::new();
    for line in text.lines() {
        // A table's cells are read apart: a cell ends a sentence.
        for cell in line.split('|') {
            let tokens: Vec<Option<String>> = cell.split_whitespace().map(word).collect();
            for two in tokens.windows(2) {
                if let [Some(a), Some(b)] = two {
                    pairs.push(format!("{a} {b}"));
                }
            }
        }
    }
    pairs
}

#[test]
fn the_check_finds_a_sentence_left_in_english_and_passes_names_and_figures() {
    assert_eq!(
        english_pairs("| 变体 | 短版 x0.75，+40 ms on every MySQL reply |"),
        ["ms on", "on every", "every MySQL", "MySQL reply"]
    );
    assert_eq!(english_pairs(">= 95% / the schedule"), ["the schedule"]);
    assert!(english_pairs("| 4.6 | 首个引擎切到数据库路径 | db_path=1 redis_path=0 |").is_empty());
    assert!(english_pairs("| redis-cut | redis | down | 2.0 | Redis 路径 |").is_empty());
}

#[sqlx::test(migrations = "./migrations")]
async fn the_chinese_report_of_a_run_with_a_variant_has_no_sentence_in_english(pool: MySqlPool) {
    let _slot = rig::one_at_a_time().await;
    let redis = TestRedis::new("reportzh").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    let variant = Variant { short: Some(0.75), extra_db_latency_ms: 20, rerun_of: Some(1) };
    let outcome =
        runner::run(&conns, rig::options(rig::REDIS_CUT, variant, None), &|_| {}).await.expect("the drill runs");
    let data = report::load(&pool, outcome.run_id).await.unwrap();
    let md = report::render(&data, Format::Markdown, Lang::Zh);

    let english = english_pairs(&md);
    assert!(english.is_empty(), "English left in the Chinese report: {english:?}\n{md}");
    assert!(md.contains("短版 x0.75，每个 MySQL 应答额外延迟 20 毫秒，重跑运行 1"), "the variant in Chinese:\n{md}");
    assert!(md.contains("数据库额外延迟（变体）") && !md.contains("extra DB latency"), "the variant's fault:\n{md}");
    assert!(md.contains("切断 Redis"), "the file's fault by its name_zh");
    // The same run in English says it all in English: the check above reads the language.
    let en = report::render(&data, Format::Markdown, Lang::En);
    assert!(en.contains("short x0.75, +20 ms on every MySQL reply, re-run of 1"), "{en}");
    assert!(!english_pairs(&en).is_empty());
}
