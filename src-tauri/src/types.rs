//! The TypeScript declarations of every type the window receives or sends, generated from the
//! Rust types with `ts-rs` into `ui/types.d.ts`. The plain-JS front end uses them through
//! JSDoc (`@typedef {import("./types").Reading} Reading`), so editors and `tsc --checkJs`
//! check the window's code against the Rust side.
//!
//! The test below fails when the file is stale; `STOCKGUARD_WRITE_TYPES=1 cargo test -p
//! stockguard-desktop types` rewrites it.

use ts_rs::{Config, TS};

macro_rules! declarations {
    ($cfg:expr; $($t:ty),* $(,)?) => {{
        let mut out = String::from(
            "// Generated from the Rust types by ts-rs (src-tauri/src/types.rs). Do not edit:\n\
             // run `STOCKGUARD_WRITE_TYPES=1 cargo test -p stockguard-desktop types`.\n",
        );
        $( out.push_str(&format!("\nexport {}\n", <$t as TS>::decl($cfg))); )*
        out
    }};
}

fn generated() -> String {
    // serde_json writes i64/u64 as JSON numbers, so the window sees `number`.
    let cfg = Config::new().with_large_int("number");
    declarations!(&cfg;
        stockguard_core::profile::EnvironmentKind,
        stockguard_core::profile::Role,
        stockguard_core::profile::SecretSlot,
        stockguard_core::alerts::Thresholds,
        stockguard_core::profile::SslMode,
        stockguard_core::profile::CertFiles,
        stockguard_core::profile::MysqlTls,
        stockguard_core::profile::Tls,
        stockguard_core::profile::Profile,
        stockguard_core::profile::Notice,
        stockguard_core::profile::manage::NamedProfile,
        stockguard_core::profile::manage::EnvPassword,
        stockguard_core::profile::manage::SavedPasswords,
        crate::commands::profiles::ProfileForm,
        crate::commands::profiles::ProfileSaved,
        stockguard_core::tls::Transport,
        stockguard_core::connect::Probe,
        crate::commands::connection::ConnectionInfo,
        stockguard_core::adapter::init::form::InitialField,
        stockguard_core::adapter::init::form::StockFields,
        stockguard_core::adapter::init::form::JoinFields,
        stockguard_core::adapter::init::form::StatusMeaning,
        stockguard_core::adapter::init::form::StatusRow,
        stockguard_core::adapter::init::form::OrdersFields,
        stockguard_core::adapter::init::form::RedisStockFields,
        stockguard_core::adapter::init::form::RedisFields,
        stockguard_core::adapter::init::form::InflightFields,
        stockguard_core::adapter::init::form::ProposalForm,
        stockguard_core::adapter::init::form::Field,
        stockguard_core::adapter::init::form::Problem,
        stockguard_core::adapter::init::form::FieldProblem,
        stockguard_core::adapter::check::KeySample,
        stockguard_core::adapter::init::fields::FormCheck,
        stockguard_core::adapter::attach::AttachTarget,
        stockguard_core::adapter::attach::AttachProfile,
        stockguard_core::adapter::attach::Proposed,
        stockguard_core::adapter::attach::PreviewRow,
        stockguard_core::adapter::attach::Previewed,
        stockguard_core::adapter::state::Baseline,
        stockguard_core::adapter::attach::Attached,
        stockguard_core::roles::Reason,
        stockguard_core::roles::Right,
        stockguard_core::roles::Rights,
        stockguard_core::ProductId,
        stockguard_core::recon::DriftStatus,
        stockguard_core::recon::Reading,
        stockguard_core::recon::drift::ConfirmedDrift,
        stockguard_core::guarantee::Guarantee,
        stockguard_core::health::Health,
        crate::board_feed::BoardTick,
        crate::board_feed::AdapterBoard,
        crate::board_feed::LostOrders,
        stockguard_core::alerts::AlertKind,
        stockguard_core::alerts::Alert,
        stockguard_core::alerts::Acknowledgement,
        stockguard_core::alerts::AlertState,
        crate::alert_desk::AlertsUpdate,
        crate::window::OpenProduct,
        stockguard_core::chart::ChartLabels,
        stockguard_core::recon::ledger::ServerKind,
        stockguard_core::recon::ledger::LedgerMismatch,
        stockguard_core::recon::ledger::LedgerReport,
        crate::commands::reconcile::LedgerProgress,
        stockguard_core::rewrite::Outcome,
        stockguard_core::rewrite::RewriteResult,
        crate::commands::rewrite::RewriteItem,
        stockguard_core::audit::AuditFilter,
        serde_json::Value,
        stockguard_core::audit::AuditRecord,
        stockguard_core::timeline::EventKind,
        stockguard_core::timeline::RecordRef,
        stockguard_core::timeline::Event,
        stockguard_core::timeline::Timeline,
        stockguard_core::switch::Mode,
        stockguard_core::switch::Scope,
        stockguard_core::switch::ScopeState,
        stockguard_core::switch::Change,
        stockguard_core::switch::InstanceAck,
        stockguard_core::switch::Acknowledgement,
        stockguard_core::switch::SwitchStatus,
        stockguard_core::switch::Toggled,
        stockguard_core::switch::ExitStep,
        stockguard_core::switch::ExitReport,
        stockguard_core::drills::RunStatus,
        stockguard_core::drills::RunRecord,
        stockguard_core::drills::RunDetail,
        stockguard_core::drills::summary::Figures,
        stockguard_core::drills::summary::Check,
        stockguard_core::drills::summary::AffectedOrder,
        stockguard_core::drills::summary::Summary,
        stockguard_core::drills::events::LoadSecond,
        stockguard_core::drills::events::TickFigures,
        stockguard_core::drills::events::Event,
        stockguard_core::drills::events::TimedEvent,
        stockguard_core::drills::compare::Side,
        stockguard_core::drills::compare::Row,
        stockguard_core::drills::compare::Comparison,
        stockguard_core::lang::Lang,
        stockguard_core::drills::report::windows::FaultWindow,
        stockguard_core::drills::report::series::LoadPoint,
        stockguard_core::drills::report::series::TickPoint,
        stockguard_core::drills::report::series::ModePoint,
        stockguard_core::drills::report::series::Series,
        stockguard_core::drills::report::shown::TimelineCharts,
        stockguard_core::drills::launch::Refusal,
        stockguard_core::drills::launch::Started,
        crate::commands::drills::DrillInfo,
        crate::commands::drills::DrillCatalog,
        crate::commands::drills::DrillTimeline,
        crate::drill_feed::DrillLive,
        stockguard_core::compensation::CaseStatus,
        stockguard_core::compensation::LineReason,
        stockguard_core::compensation::Action,
        stockguard_core::compensation::LineOutcome,
        stockguard_core::compensation::Line,
        stockguard_core::compensation::Step,
        stockguard_core::compensation::Case,
        stockguard_core::compensation::read::CaseSummary,
        stockguard_core::compensation::open::Opened,
        stockguard_core::compensation::plan::Planned,
        stockguard_core::compensation::workflow::StepKind,
        stockguard_core::compensation::workflow::Stepped,
        stockguard_core::compensation::execute::LineRun,
        stockguard_core::compensation::execute::Execution,
        crate::commands::compensation::CompensationProgress,
        stockguard_core::overview::EngineAnswer,
        stockguard_core::overview::SaleFigures,
        stockguard_core::overview::OrderFigures,
        stockguard_core::overview::EngineFigures,
        stockguard_core::overview::Overview,
        stockguard_core::overview::verdict::Verdict,
        stockguard_core::overview::verdict::Level,
        crate::commands::overview::BurnDownView,
        crate::error::ErrorKind,
        crate::error::MessageCode,
        crate::error::ErrorWire,
    )
}

#[test]
fn the_ui_type_declarations_match_the_rust_types() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/types.d.ts");
    let fresh = generated();
    if std::env::var_os("STOCKGUARD_WRITE_TYPES").is_some() {
        std::fs::write(&path, &fresh).expect("ui/types.d.ts is writable");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "ui/types.d.ts is stale: run `STOCKGUARD_WRITE_TYPES=1 cargo test -p stockguard-desktop types` and commit it"
    );
}

/// `ui/commands.d.ts` is written by hand (ts-rs does not see command signatures), so this holds
/// it to the Rust side: every `#[tauri::command]` in `commands/` is registered in `main.rs`,
/// takes its arguments in snake_case, and is listed in the table with exactly its arguments.
#[test]
fn the_hand_written_command_table_matches_the_commands() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let command = regex::Regex::new(r"#\[tauri::command([^\]]*)\]\s*pub (?:async )?fn (\w+)\(([^)]*)\)").unwrap();
    let mut rust = std::collections::BTreeMap::new();
    for entry in std::fs::read_dir(root.join("src/commands")).unwrap() {
        let source = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for found in command.captures_iter(&source) {
            let name = found[2].to_string();
            assert_eq!(&found[1], r#"(rename_all = "snake_case")"#, "{name}: arguments go by their Rust names");
            rust.insert(name, rust_arguments(&found[3]));
        }
    }
    let main = std::fs::read_to_string(root.join("src/main.rs")).unwrap();
    for name in rust.keys() {
        assert!(main.contains(&format!("::{name},")), "{name} is not registered in main.rs");
    }
    let table = std::fs::read_to_string(root.join("../ui/commands.d.ts")).unwrap();
    let entry = regex::Regex::new(r"(?m)^  (\w+): \{\s*args: \{([^}]*)\}").unwrap();
    let typed: std::collections::BTreeMap<String, Vec<String>> = entry
        .captures_iter(&table)
        .map(|found| {
            let args = found[2].split(';').filter_map(|a| a.split(':').next()).map(|a| a.trim().trim_end_matches('?'));
            let mut args: Vec<String> = args.filter(|a| !a.is_empty()).map(str::to_string).collect();
            args.sort();
            (found[1].to_string(), args)
        })
        .collect();
    assert_eq!(typed, rust, "ui/commands.d.ts (left) and the commands in src/commands (right)");
}

/// The names of a command's arguments the window passes (not the ones Tauri injects), sorted.
fn rust_arguments(parameters: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut depth = 0;
    let mut current = String::new();
    for c in parameters.chars().chain([',']) {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            ',' if depth == 0 => {
                if let Some((name, ty)) = current.split_once(':') {
                    let injected =
                        ["State<", "AppHandle", "Window", "tauri::"].iter().any(|t| ty.trim().starts_with(t));
                    if !injected {
                        names.push(name.trim().to_string());
                    }
                }
                current.clear();
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    names.sort();
    names
}
