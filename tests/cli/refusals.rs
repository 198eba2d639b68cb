//! The one rule per action, as the CLI says it: an acknowledgement is refused to a
//! facilitator, a viewer and an approver by the core, in one line naming who may, before
//! anything is written; on-call gets past the rule to the alert itself.

use crate::commands::{assert_one_line_error, sale_env, stockguard};

fn as_role(env: &[(&'static str, String)], role: &'static str) -> Vec<(&'static str, String)> {
    let mut env = env.to_vec();
    env.push(("STOCKGUARD_ROLE", role.to_string()));
    env
}

fn run(args: &[&str], env: &[(&'static str, String)]) -> std::process::Output {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    stockguard(args, &env)
}

#[sqlx::test(migrations = "./migrations")]
async fn an_acknowledgement_is_refused_to_every_role_the_catalogue_does_not_let_write_it(pool: sqlx::MySqlPool) {
    let env = sale_env(&pool).await;
    let ack = ["alerts", "ack", "oversold:71", "--reason", "mine"];
    for role in ["facilitator", "viewer", "approver"] {
        let out = run(&ack, &as_role(&env, role));
        assert_one_line_error(&out, &format!("the {role} role may not acknowledge alerts; oncall and admin may"));
    }
    let acks: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM alert_acks").fetch_one(&pool).await.unwrap();
    assert_eq!(acks, 0, "nothing was written");
    // On-call passes the rule; nothing fires on this empty sale, and it is told so.
    assert_one_line_error(&run(&ack, &as_role(&env, "oncall")), "no alert `oversold:71` is firing now");
    assert_one_line_error(&run(&ack, &as_role(&env, "chief")), "unknown role `chief`");
}
