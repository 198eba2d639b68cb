//! The core's one table of what a sale can do (issue 50), walked through the CLI on a sale
//! over its adapter file: what the table allows works, what it refuses is refused in one line
//! in the core's words (the window's test, `the_window_says_a_refusal_in_the_cores_words`,
//! holds its templates to the same words), and a refusal writes nothing.

use std::sync::Arc;

use sqlx::MySqlPool;
use stockguard_core::sale::{Capability, Grounds, Need, Refusal, SaleKind, Support};

use crate::cli::{adapter_env, stockguard};
use crate::sales::course_stream::CourseStreamSale;
use crate::sales::Traffic;

/// What the table says the CLI must do with `capability` on the course sale (its file allows
/// the delta repair and has no `[switch]`; a state database is named).
fn expected(capability: Capability, sale: &str) -> Result<(), String> {
    let refused = |grounds, why| {
        Err(Refusal { capability, kind: SaleKind::Adapter, sale: sale.to_string(), grounds, why }.to_string())
    };
    match SaleKind::Adapter.supports(capability) {
        Support::Supported => Ok(()),
        Support::Where(Need::Switch) => refused(Grounds::Needs(Need::Switch), Need::Switch.unmet()),
        Support::Where(_) => Ok(()),
        Support::Unsupported(why) => refused(Grounds::Never, why),
    }
}

/// The command that asks for `capability` (none: a command that runs until stopped).
fn command(capability: Capability, png: &str) -> Option<Vec<&str>> {
    Some(match capability {
        Capability::Reading => vec!["recon", "--json"],
        Capability::Overview => vec!["overview", "--json"],
        Capability::Burndown => vec!["overview", "--png", png],
        Capability::LedgerCheck => vec!["recon", "--ledger"],
        Capability::Degrade => vec!["degrade", "status"],
        Capability::Repair => vec!["rewrite", "--product", "1", "--dry-run", "--reason", "the table, walked"],
        Capability::Compensation => vec!["compensation", "list"],
        Capability::Alerts => vec!["alerts", "--json"],
        Capability::Audit => vec!["audit", "--json"],
        Capability::Watch => return None,
        Capability::Drills => vec!["drill", "status"],
        Capability::Rights => vec!["roles", "show"],
        Capability::Products => vec!["products"],
        Capability::Migrate => vec!["migrate"],
        Capability::Engine => vec!["engine", "serve"],
        Capability::AdapterTools => vec!["adapter", "check"],
    })
}

#[sqlx::test(migrations = false)]
async fn the_cli_does_on_a_sale_over_its_adapter_what_the_table_says_and_refuses_the_rest_in_its_words(
    state: MySqlPool,
) {
    let sale = Arc::new(CourseStreamSale::start(&[(1, 20), (2, 20)]).await);
    Traffic::buyers(10).on(&[1, 2]).run(&sale).await;
    // A unit lost after Redis took it: a settled drift for the repair's dry run to show.
    sale.lose_one_after_redis(1).await;
    let name = stockguard_core::adapter::AdapterFile::parse(&sale.adapter_toml(), std::path::Path::new("sale.toml"))
        .unwrap()
        .sale
        .name;
    let dir = tempfile::tempdir().unwrap();
    let owned = adapter_env(&sale, dir.path(), &state).await;
    let env: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let png = dir.path().join("burn.png");
    let png = png.to_str().unwrap();
    let audited = || async {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM audit_log").fetch_one(&state).await.unwrap_or(0);
        n
    };

    let mut walked = Vec::new();
    for capability in Capability::ALL {
        let Some(args) = command(capability, png) else { continue };
        let before = audited().await;
        let run = stockguard(&args, &env);
        let (out, err) =
            (String::from_utf8_lossy(&run.stdout).into_owned(), String::from_utf8_lossy(&run.stderr).into_owned());
        match expected(capability, &name) {
            Ok(()) => assert!(run.status.success(), "{capability:?} ({args:?}) works over an adapter: {out}{err}"),
            Err(words) => {
                assert!(!run.status.success(), "{capability:?} ({args:?}) is refused: {out}");
                let said: Vec<&str> = err.lines().filter(|l| !l.starts_with("note:")).collect();
                assert_eq!(said.len(), 1, "{capability:?}: one line: {err}");
                assert!(said[0].ends_with(&words), "{capability:?}: the core's words\n{}\n{words}", said[0]);
                assert_eq!(audited().await, before, "{capability:?}: a refusal writes nothing");
            }
        }
        walked.push(capability);
    }
    assert_eq!(walked.len(), Capability::ALL.len() - 1, "every capability but the watcher (it runs until stopped)");
    assert!(!std::path::Path::new(png).exists(), "no burn-down was drawn");

    let overview = stockguard(&["overview", "--json"], &env);
    let o: serde_json::Value = serde_json::from_slice(&overview.stdout).unwrap();
    assert_eq!(o["over_adapter"], name.as_str(), "the overview says whose sale it is: {o}");
    assert_eq!(o["sale"]["initial_units"], 40, "{o}");
    sale.cleanup().await;
}
