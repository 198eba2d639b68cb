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
        stockguard_core::profile::Profile,
        stockguard_core::profile::manage::NamedProfile,
        crate::commands::profiles::ProfileForm,
        stockguard_core::connect::Probe,
        crate::commands::connection::ConnectionInfo,
        stockguard_core::recon::DriftStatus,
        stockguard_core::recon::Reading,
        stockguard_core::recon::sampler::ConfirmedDrift,
        stockguard_core::health::Health,
        crate::board_feed::BoardTick,
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
        crate::error::ErrorKind,
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
