//! What a run changes from its drill file (`drill run --short`, `--extra-db-latency-ms`,
//! `--rerun`), recorded with the run (`parameters.variant`) and said in either language: the
//! runner writes it in the summary, the report words it from the record in the report's own
//! language (issue 51: the Chinese report said it in English). A leaf: the runner and the
//! report read it, it reads neither.

use serde::{Deserialize, Serialize};

use crate::lang::Lang;

/// The name of the fault a `--extra-db-latency-ms` variant adds to the run, as the timeline
/// records it.
pub const VARIANT_FAULT: &str = "extra DB latency (variant)";

/// [`VARIANT_FAULT`] in Chinese.
pub const VARIANT_FAULT_ZH: &str = "数据库额外延迟（变体）";

/// What the run changes from its file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Variant {
    /// CI's short form: load and timeline scaled by this factor.
    pub short: Option<f64>,
    /// Latency added to every MySQL reply for the whole load (a what-if re-run).
    pub extra_db_latency_ms: u64,
    /// The run this one re-runs.
    pub rerun_of: Option<u64>,
}

impl Variant {
    /// The variant in a sentence in `lang`; `None` when the run is its file as written.
    pub fn describe_in(&self, lang: Lang) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(f) = self.short {
            parts.push(match lang {
                Lang::En => format!("short x{f}"),
                Lang::Zh => format!("短版 x{f}"),
            });
        }
        if self.extra_db_latency_ms > 0 {
            let ms = self.extra_db_latency_ms;
            parts.push(match lang {
                Lang::En => format!("+{ms} ms on every MySQL reply"),
                Lang::Zh => format!("每个 MySQL 应答额外延迟 {ms} 毫秒"),
            });
        }
        if let Some(run) = self.rerun_of {
            parts.push(match lang {
                Lang::En => format!("re-run of {run}"),
                Lang::Zh => format!("重跑运行 {run}"),
            });
        }
        let comma = if lang == Lang::Zh { "，" } else { ", " };
        (!parts.is_empty()).then(|| parts.join(comma))
    }

    /// The variant a run recorded in its parameters (`parameters.variant`), if it holds one.
    pub fn of_parameters(parameters: &serde_json::Value) -> Option<Self> {
        parameters.get("variant").and_then(|v| serde_json::from_value(v.clone()).ok())
    }
}

/// The name of a fault the runner adds itself in Chinese, when it is one.
pub fn runners_fault_zh(fault: &str) -> Option<&'static str> {
    (fault == VARIANT_FAULT).then_some(VARIANT_FAULT_ZH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variant_is_said_in_each_language_and_none_when_the_file_is_run_as_written() {
        let v = Variant { short: Some(0.5), extra_db_latency_ms: 40, rerun_of: Some(7) };
        assert_eq!(v.describe_in(Lang::En).unwrap(), "short x0.5, +40 ms on every MySQL reply, re-run of 7");
        assert_eq!(v.describe_in(Lang::Zh).unwrap(), "短版 x0.5，每个 MySQL 应答额外延迟 40 毫秒，重跑运行 7");
        assert_eq!(Variant::default().describe_in(Lang::Zh), None);
        let recorded = serde_json::json!({ "variant": { "short": 0.5, "extra_db_latency_ms": 40, "rerun_of": 7 } });
        assert_eq!(Variant::of_parameters(&recorded), Some(v));
    }
}
