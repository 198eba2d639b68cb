//! "Attach a sale" (the desktop's wizard) in the core. On a course-shaped sale with a stream:
//! the proposal comes back as a form, a wrong column is said in its own field, the fixed form
//! reads the first products with no drift, and the saved profile opens in the CLI, which reads
//! the sale through the adapter file beside it with the same verdict, against the baselines the
//! save recorded (audited, in the state database). On a FastAPI-shaped sale with a RabbitMQ
//! queue: a key template that matches no key and a queue that does not exist are each said in
//! their own field until they name what the sale has.

use std::process::Command;
use std::sync::Arc;

use sqlx::MySqlPool;
use stockguard_core::adapter::attach::{self, AttachProfile, AttachTarget, SaveTo};
use stockguard_core::adapter::init::form::{Field, InflightFields, Problem, ProposalForm, StatusMeaning};
use stockguard_core::adapter::AdapterFile;
use stockguard_core::profile::{EnvironmentKind, ProfileStore, Role, SecretSlot};

use crate::sales::course_stream::{status, CourseStreamSale};
use crate::sales::fastapi_rabbit::FastapiRabbitSale;
use crate::sales::{amqp_url, rows_written, Traffic};
use crate::support::keychain::Recorded;

/// Where the course sale is, as a person types it into the wizard.
async fn target_of(sale: &CourseStreamSale, state: &MySqlPool) -> AttachTarget {
    AttachTarget {
        mysql_url: sale.db.url.clone(),
        mysql_password: None,
        redis_url: crate::support::redis_url(),
        redis_password: None,
        amqp_url: None,
        state_url: Some(crate::support::mysql_url_of(state).await),
        state_password: None,
        keys: Some(format!("{}*", sale.prefix)),
    }
}

fn remaining_of(form: &mut ProposalForm) -> &mut String {
    &mut form.stock.as_mut().expect("the proposal found the stock table").remaining
}

#[sqlx::test(migrations = false)]
async fn a_course_sale_attached_through_its_form_reads_the_same_in_the_cli_with_its_baselines(state: MySqlPool) {
    let sale = Arc::new(CourseStreamSale::start(&[(1, 20), (2, 20), (3, 20)]).await);
    assert_eq!(Traffic::buyers(12).on(&[1, 2, 3]).run(&sale).await.accepted, 12);
    rows_written(|p| sale.orders(p), &[1, 2, 3], 12).await;
    let cancelled = sale.order_ids(1, status::UNPAID).await[0];
    assert!(sale.cancel(cancelled).await, "their cancel path gives the unit back");
    let target = target_of(&sale, &state).await;

    // The proposal, as a form: the sale's own tables, key template and stream.
    let proposed = attach::propose(&target).await.expect("the sale is read");
    let mut form = proposed.check.form.clone();
    let stock = form.stock.as_ref().unwrap();
    assert_eq!((stock.table.as_str(), stock.remaining.as_str()), ("tb_seckill_voucher", "stock"));
    let orders = form.orders.as_ref().unwrap();
    assert_eq!((orders.table.as_str(), orders.status.as_str()), ("tb_voucher_order", "status"));
    let counted: Vec<(&str, i64)> = orders.statuses.iter().map(|s| (s.value.as_str(), s.orders)).collect();
    assert_eq!(counted, [("1", 11), ("4", 1)], "each status found beside its orders counted");
    assert_eq!(
        form.redis.as_ref().map(|r| &r.stock),
        Some(&stockguard_core::adapter::init::form::RedisStockFields::Counter {
            template: format!("{}:seckill:stock:${{id}}", sale.prefix),
            clamp: false
        })
    );
    assert!(
        matches!(&form.inflight, InflightFields::RedisStream { group, .. } if group == "g1"),
        "{:?}",
        form.inflight
    );
    assert!(
        proposed.check.keys.iter().any(|k| k.value.is_some()),
        "a sampled key with its value: {:?}",
        proposed.check.keys
    );

    // Their code says 4 is cancelled: its unit went back.
    for s in &mut form.orders.as_mut().unwrap().statuses {
        if s.value == "4" {
            s.meaning = StatusMeaning::Released;
        }
    }
    // A wrong column is said in its own field, and nothing is read through it.
    *remaining_of(&mut form) = "stok".into();
    let wrong = attach::preview(&target, &form).await.expect("the form is checked");
    let said: Vec<(Field, Problem, &str)> =
        wrong.check.problems.iter().map(|p| (p.field, p.problem, p.name.as_str())).collect();
    assert_eq!(said, [(Field::StockRemaining, Problem::NoColumn, "stok")]);
    assert!(wrong.readings.is_empty());

    // Fixed, the first products read with no drift.
    *remaining_of(&mut form) = "stock".into();
    let previewed = attach::preview(&target, &form).await.expect("the sale is read through the form");
    assert!(previewed.check.problems.is_empty(), "{:?}", previewed.check.problems);
    let verdicts: Vec<(u64, Option<i64>, stockguard_core::recon::DriftStatus)> =
        previewed.readings.iter().map(|r| (crate::readings::number(&r.product_id), r.drift, r.status)).collect();
    let ok = stockguard_core::recon::DriftStatus::Ok;
    assert_eq!(verdicts, [(1, Some(0), ok), (2, Some(0), ok), (3, Some(0), ok)]);

    // Saved: the adapter file beside the profiles file, the profile naming it, the baselines.
    let config = tempfile::tempdir().unwrap();
    let profiles = config.path().join("profiles.toml");
    let to = SaveTo { profiles: profiles.clone(), secrets: Arc::new(Recorded::default()) };
    let who = AttachProfile { name: "course".into(), environment: Some(EnvironmentKind::Sandbox), role: Role::Oncall };
    let refused = attach::save(&to, &target, &form, &who, " ").await.unwrap_err();
    assert!(matches!(refused, attach::AttachError::NoReason), "{refused}");
    assert!(!profiles.exists(), "nothing is written before the reason is given");
    let saved = attach::save(&to, &target, &form, &who, "sale attached").await.expect("the sale is attached");
    let file = AdapterFile::load(std::path::Path::new(&saved.adapter)).expect("the adapter file parses");
    assert!(file.needs_baseline());
    assert_eq!(std::path::Path::new(&saved.adapter).parent(), Some(config.path()), "beside the profiles file");
    let profile = ProfileStore::load(&profiles).unwrap().get("course").unwrap().clone();
    assert_eq!(profile.adapter.as_deref(), Some(saved.adapter.as_str()));
    assert_eq!(profile.state_url, target.state_url);
    let initial: Vec<(u64, i64)> =
        saved.baselines.iter().map(|b| (crate::readings::number(&b.product_id), b.initial_stock)).collect();
    assert_eq!(initial, [(1, 20), (2, 20), (3, 20)], "the cancelled order's unit is counted once");
    let audited: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM audit_log WHERE action = 'adapter_baseline'")
        .fetch_one(&state)
        .await
        .unwrap();
    assert_eq!(audited, 1);

    // The CLI opens the saved profile and reads the sale with the same verdict.
    let mut cli = Command::new(env!("CARGO_BIN_EXE_stockguard"));
    cli.args(["--profile", "course", "recon", "--json"]).env("STOCKGUARD_CONFIG_DIR", config.path());
    for k in crate::support::PROFILE_OVERRIDES.iter().chain(&["STOCKGUARD_ADAPTER", "STOCKGUARD_STATE_URL"]) {
        cli.env_remove(k);
    }
    let out = cli.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let readings: serde_json::Value = serde_json::from_slice(&out.stdout).expect("recon --json prints JSON");
    let mut cli_verdicts: Vec<(u64, Option<i64>, String, String)> = readings
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap().to_string();
            (r["product_id"].as_u64().unwrap(), r["drift"].as_i64(), s("status"), s("initial_source"))
        })
        .collect();
    cli_verdicts.sort();
    let same: Vec<_> = (1..=3).map(|id| (id, Some(0), "OK".to_string(), "baseline".to_string())).collect();
    assert_eq!(cli_verdicts, same);
    sale.cleanup().await;
}

/// The problems of a check, by field, kind and name.
fn said(problems: &[stockguard_core::adapter::init::form::FieldProblem]) -> Vec<(Field, Problem, String)> {
    problems.iter().map(|p| (p.field, p.problem, p.name.clone())).collect()
}

#[tokio::test]
async fn a_rabbitmq_sales_key_template_and_queue_are_said_in_their_fields_until_they_name_what_it_has() {
    let sale = Arc::new(FastapiRabbitSale::start(&[(1, 10), (2, 10)]).await);
    assert_eq!(Traffic::buyers(4).on(&[1, 2]).run(&sale).await.accepted, 4);
    rows_written(|p| sale.orders(p), &[1, 2], 4).await;
    let target = AttachTarget {
        mysql_url: sale.db.url.clone(),
        mysql_password: None,
        redis_url: crate::support::redis_url(),
        redis_password: None,
        amqp_url: Some(amqp_url()),
        state_url: None,
        state_password: None,
        keys: Some(format!("{}*", sale.prefix)),
    };

    // No stream: the queue is on the RabbitMQ given, its name for the person to say.
    let proposed = attach::propose(&target).await.expect("the sale is read");
    assert_eq!(said(&proposed.check.problems), [(Field::InflightQueue, Problem::Empty, String::new())]);
    let mut form = proposed.check.form.clone();
    assert!(
        matches!(&form.inflight, InflightFields::Rabbitmq { url, .. } if *url == amqp_url()),
        "{:?}",
        form.inflight
    );

    // A queue that does not exist and a template that matches no key, each in its field.
    let (wrong_queue, wrong_template) = (format!("{}.nosuch", sale.queue), format!("{}:stok:${{id}}", sale.prefix));
    let set = |form: &mut ProposalForm, queue: &str, template: &str| {
        if let InflightFields::Rabbitmq { queue: q, .. } = &mut form.inflight {
            *q = queue.to_string();
        }
        form.redis.as_mut().expect("the proposal found the stock key").stock =
            stockguard_core::adapter::init::form::RedisStockFields::Counter { template: template.into(), clamp: false };
    };
    set(&mut form, &wrong_queue, &wrong_template);
    let wrong = attach::preview(&target, &form).await.expect("the form is checked");
    assert_eq!(
        said(&wrong.check.problems),
        [
            (Field::RedisStock, Problem::NoKey, wrong_template.clone()),
            (Field::InflightQueue, Problem::NoQueue, wrong_queue)
        ]
    );
    assert!(wrong.readings.is_empty());

    // Named as the sale has them, the first products read with no drift, the queue empty.
    set(&mut form, &sale.queue, &format!("{}:stock:${{id}}", sale.prefix));
    let fixed = attach::preview(&target, &form).await.expect("the sale is read through the form");
    assert!(fixed.check.problems.is_empty(), "{:?}", fixed.check.problems);
    assert_eq!(fixed.check.in_flight, Some(0));
    let drifts: Vec<(u64, Option<i64>)> =
        fixed.readings.iter().map(|r| (crate::readings::number(&r.product_id), r.drift)).collect();
    assert_eq!(drifts, [(1, Some(0)), (2, Some(0))]);
    sale.cleanup().await;
}

#[sqlx::test(migrations = false)]
async fn a_password_typed_into_the_wizard_goes_to_the_keychain_and_into_no_file(state: MySqlPool) {
    let sale = Arc::new(CourseStreamSale::start(&[(1, 10)]).await);
    assert_eq!(Traffic::buyers(2).on(&[1]).run(&sale).await.accepted, 2);
    rows_written(|p| sale.orders(p), &[1], 2).await;
    // The SELECT-only account a team hands over, its password typed apart from its URL.
    let mut url = url::Url::parse(&sale.db.select_only_url().await).unwrap();
    let password = url.password().expect("the account has a password").to_string();
    url.set_password(None).unwrap();
    let target = AttachTarget {
        mysql_url: url.to_string(),
        mysql_password: Some(password.clone()),
        ..target_of(&sale, &state).await
    };
    let form = attach::propose(&target).await.expect("the sale is read through its SELECT-only account").check.form;

    let config = tempfile::tempdir().unwrap();
    let keychain = Arc::new(Recorded::default());
    let to = SaveTo { profiles: config.path().join("profiles.toml"), secrets: keychain.clone() };
    let who =
        AttachProfile { name: "course-ro".into(), environment: Some(EnvironmentKind::Staging), role: Role::Oncall };
    let saved = attach::save(&to, &target, &form, &who, "sale attached").await.expect("the sale is attached");
    assert_eq!(keychain.0.lock().unwrap().get(&("course-ro".to_string(), SecretSlot::Mysql)), Some(&password));
    for file in [to.profiles.clone(), std::path::PathBuf::from(&saved.adapter)] {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(!text.contains(&password), "{} holds the password:\n{text}", file.display());
    }
    let profile = ProfileStore::load(&to.profiles).unwrap().get("course-ro").unwrap().clone();
    assert_eq!(profile.secrets, std::collections::BTreeSet::from([SecretSlot::Mysql]));
    assert_eq!(profile.mysql_url, url.to_string());
    assert_eq!(saved.baselines.len(), 1, "read through the same account");
    sale.cleanup().await;
}
