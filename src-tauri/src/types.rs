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
        stockguard::profile::EnvironmentKind,
        stockguard::profile::Role,
        stockguard::profile::SecretSlot,
        stockguard::profile::Profile,
        stockguard::profile::manage::NamedProfile,
        crate::commands::profiles::ProfileForm,
        stockguard::connect::Probe,
        crate::commands::connection::ConnectionInfo,
        stockguard::recon::DriftStatus,
        stockguard::recon::Reading,
        stockguard::recon::sampler::ConfirmedDrift,
        stockguard::health::Health,
        crate::board_feed::BoardTick,
        stockguard::chart::ChartLabels,
        stockguard::recon::ledger::ServerKind,
        stockguard::recon::ledger::LedgerMismatch,
        stockguard::recon::ledger::LedgerReport,
        crate::commands::reconcile::LedgerProgress,
        stockguard::rewrite::Outcome,
        stockguard::rewrite::RewriteResult,
        crate::commands::rewrite::RewriteItem,
        stockguard::audit::AuditFilter,
        stockguard::audit::AuditRecord,
        stockguard::switch::Mode,
        stockguard::switch::Scope,
        stockguard::switch::ScopeState,
        stockguard::switch::Change,
        stockguard::switch::InstanceAck,
        stockguard::switch::Acknowledgement,
        stockguard::switch::SwitchStatus,
        stockguard::switch::Toggled,
        stockguard::switch::ExitStep,
        stockguard::switch::ExitReport,
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
