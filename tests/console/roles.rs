//! Roles the servers enforce, against the real MariaDB and Redis: a roles file applied (and
//! applied again), then each account connecting with its own credentials and being refused
//! what its role does not give. MySQL accounts and roles and Redis users are server-wide, so
//! every test names its own and drops them when it ends, even when it fails.

use crate::support;

use std::sync::atomic::{AtomicU64, Ordering};

use secrecy::ExposeSecret as _;
use sqlx::MySqlPool;
use stockguard_core::connect::Connections;
use stockguard_core::profile::{ConnectionSettings, EnvironmentKind};
use stockguard_core::roles::{self, Plan, RolesSpec, SaleRole, Target};
use support::TestRedis;

/// Names no other test (or run) uses: short, for MySQL's 32 characters.
fn unique_id() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    let mixed = nanos ^ (u64::from(std::process::id()) << 20) ^ (N.fetch_add(1, Ordering::Relaxed) << 44);
    format!("{:08x}", mixed & 0xffff_ffff)
}

/// The people of one test: one of each role, their password the same as their name
/// (from the "environment" the test passes to the plan).
pub(crate) struct People {
    id: String,
    pub(crate) role_prefix: String,
    redis_url: String,
}

impl People {
    pub(crate) fn new() -> Self {
        let id = unique_id();
        Self { role_prefix: format!("sgt{id}"), id, redis_url: support::redis_url() }
    }

    pub(crate) fn user(&self, role: SaleRole) -> String {
        format!("sgt{}{}", self.id, &role.as_str()[..3])
    }

    /// A second on-call person (compensation wants its executor apart from its maker).
    pub(crate) fn second_oncall(&self) -> String {
        self.second(SaleRole::Oncall)
    }

    /// A second person of `role` (a MySQL account only, with the role's password).
    pub(crate) fn second(&self, role: SaleRole) -> String {
        format!("{}2", self.user(role))
    }

    pub(crate) fn password(&self, role: SaleRole) -> String {
        format!("pw-{}-{}", self.id, role.as_str())
    }

    pub(crate) fn spec(&self, roles: &[SaleRole]) -> RolesSpec {
        let mut text = format!("role_prefix = \"{}\"\n", self.role_prefix);
        for role in roles {
            let user = self.user(*role);
            text.push_str(&format!(
                "[[person]]\nname = \"{role}\"\nrole = \"{role}\"\nmysql_user = \"{user}\"\nredis_user = \"{user}\"\npassword_env = \"PW_{role}\"\n"
            ));
        }
        RolesSpec::parse(&text, "test roles").expect("the test's roles file parses")
    }

    pub(crate) fn plan(&self, roles: &[SaleRole], target: &Target) -> Plan {
        let env = |var: &str| SaleRole::ALL.iter().find(|r| var == format!("PW_{r}")).map(|r| self.password(*r));
        roles::plan(&self.spec(roles), target, &env).expect("the plan is made")
    }

    /// Connections as this role's person, to the test's database and key prefix.
    pub(crate) async fn connect(&self, role: SaleRole, pool: &MySqlPool, redis: &TestRedis) -> Connections {
        Connections::open(self.settings(role, pool, redis).await)
            .await
            .unwrap_or_else(|e| panic!("the {role} connects with its own credentials: {e}"))
    }

    pub(crate) async fn settings(&self, role: SaleRole, pool: &MySqlPool, redis: &TestRedis) -> ConnectionSettings {
        let mut mysql = url::Url::parse(&support::mysql_url_of(pool).await).unwrap();
        mysql.set_username(&self.user(role)).unwrap();
        mysql.set_password(Some(&self.password(role))).unwrap();
        let mut redis_url = url::Url::parse(&redis.url).unwrap();
        redis_url.set_username(&self.user(role)).unwrap();
        redis_url.set_password(Some(&self.password(role))).unwrap();
        ConnectionSettings::from_urls(EnvironmentKind::Sandbox, mysql.as_str(), redis_url.as_str(), redis.keys.prefix())
    }
}

impl Drop for People {
    /// Drops every account, role and Redis user the test may have made; runs on a thread of
    /// its own because the test's runtime is ending.
    fn drop(&mut self) {
        let mut users: Vec<String> = SaleRole::ALL.iter().map(|r| self.user(*r)).collect();
        users.extend(SaleRole::ALL.iter().map(|r| self.second(*r)));
        let roles: Vec<String> = SaleRole::ALL.iter().map(|r| format!("{}_{r}", self.role_prefix)).collect();
        if let Ok(mut conn) = redis::Client::open(self.redis_url.as_str()).and_then(|c| c.get_connection()) {
            let _: redis::RedisResult<i64> = redis::cmd("ACL").arg("DELUSER").arg(&users).query(&mut conn);
        }
        let url = std::env::var("DATABASE_URL").expect("DATABASE_URL is set");
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(async {
                let Ok(pool) = MySqlPool::connect(&url).await else { return };
                for user in &users {
                    let _ = sqlx::raw_sql(&format!("DROP USER IF EXISTS '{user}'@'%'")).execute(&pool).await;
                }
                for role in &roles {
                    let _ = sqlx::raw_sql(&format!("DROP ROLE IF EXISTS `{role}`")).execute(&pool).await;
                }
            });
        })
        .join()
        .unwrap();
    }
}

/// Applies `roles` with the test's admin connection (root).
pub(crate) async fn applied(pool: &MySqlPool, redis: &TestRedis, people: &People, roles: &[SaleRole]) -> Connections {
    let admin = support::connections(pool, redis, EnvironmentKind::Sandbox).await;
    let target = Target::of(&admin).await.unwrap();
    roles::apply(&people.plan(roles, &target), &admin, "roles for a test").await.expect("apply succeeds");
    admin
}

/// The MySQL error number of a refused statement.
pub(crate) fn mysql_number(err: sqlx::Error) -> u16 {
    err.as_database_error()
        .and_then(|d| d.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>())
        .map(|d| d.number())
        .unwrap_or_else(|| panic!("a server error, not {err}"))
}

/// MySQL `ER_TABLEACCESS_DENIED_ERROR`: the privilege, not a trigger, refused it.
pub(crate) const COMMAND_DENIED: u16 = 1142;

/// Everything the servers know about the test's roles, accounts and Redis users.
async fn server_state(admin: &Connections, people: &People) -> Vec<String> {
    let mut state = Vec::new();
    for role in SaleRole::ALL {
        for grantee in [format!("'{}'@'%'", people.user(role)), format!("`{}_{role}`", people.role_prefix)] {
            let mut lines: Vec<String> = sqlx::query_scalar(&format!("SHOW GRANTS FOR {grantee}"))
                .fetch_all(&admin.mysql)
                .await
                .unwrap_or_else(|e| vec![format!("{grantee}: {e}")]);
            // The server lists table grants in no fixed order.
            lines.sort();
            state.extend(lines);
        }
        let mut redis = admin.redis.clone();
        let user: redis::Value =
            redis::cmd("ACL").arg("GETUSER").arg(people.user(role)).query_async(&mut redis).await.unwrap();
        state.push(format!("{user:?}"));
    }
    state
}

#[sqlx::test(migrations = "./migrations")]
async fn applying_a_roles_file_creates_the_roles_and_accounts_and_applying_it_again_changes_nothing(pool: MySqlPool) {
    let redis = TestRedis::new("roles1").await;
    let people = People::new();
    let admin = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    let target = Target::of(&admin).await.unwrap();
    let mut spec = people.spec(&SaleRole::ALL);
    // One person with a generated password: set once, never again.
    spec.persons[0].password_env = None;
    let env = |var: &str| SaleRole::ALL.iter().find(|r| var == format!("PW_{r}")).map(|r| people.password(*r));

    let first = roles::apply(&roles::plan(&spec, &target, &env).unwrap(), &admin, "first").await.unwrap();
    assert_eq!(first.created.len(), 10, "five MySQL accounts and five Redis users");
    assert_eq!(first.new_passwords.len(), 1);
    let generated = first.new_passwords[0].password.expose_secret().to_string();
    // MariaDB's `mysql.user` is a view whose computed columns will not compare with a literal.
    let accounts: Vec<(String, String)> =
        sqlx::query_as("SELECT CAST(User AS CHAR), CAST(is_role AS CHAR) FROM mysql.user")
            .fetch_all(&pool)
            .await
            .unwrap();
    let made: Vec<&String> = accounts
        .iter()
        .filter(|(name, is_role)| is_role == "Y" && name.starts_with(&format!("{}_", people.role_prefix)))
        .map(|(name, _)| name)
        .collect();
    assert_eq!(made.len(), 5, "{made:?}");
    let before = server_state(&admin, &people).await;

    let second = roles::apply(&roles::plan(&spec, &target, &env).unwrap(), &admin, "second").await.unwrap();
    assert!(second.created.is_empty() && second.new_passwords.is_empty());
    assert!(second.skipped > 0, "the new generated password is not set on the existing account");
    assert_eq!(server_state(&admin, &people).await, before, "a second apply changes nothing");

    // The generated password still opens the account it was made for.
    let mut viewer = people.settings(SaleRole::Viewer, &pool, &redis).await;
    let mut url = url::Url::parse(viewer.mysql_url.expose_secret()).unwrap();
    url.set_password(Some(&generated)).unwrap();
    viewer.mysql_url = url.to_string().into();
    let mut redis_url = url::Url::parse(viewer.redis_url.expose_secret()).unwrap();
    redis_url.set_password(Some(&generated)).unwrap();
    viewer.redis_url = redis_url.to_string().into();
    Connections::open(viewer).await.expect("the generated password opens both accounts");

    let audits = stockguard_core::audit::recent(&pool, Some("roles.apply"), 10).await.unwrap();
    assert_eq!(audits.len(), 2);
    assert!(audits.iter().all(|a| a.outcome == "APPLIED"));
    let details = audits[0].details.as_ref().unwrap().to_string();
    assert!(!details.contains(&generated) && !details.contains(&people.password(SaleRole::Oncall)));
}

#[sqlx::test(migrations = "./migrations")]
async fn a_viewer_may_read_but_mysql_and_redis_refuse_its_writes_and_its_rights_say_why(pool: MySqlPool) {
    let redis = TestRedis::new("roles2").await;
    let people = People::new();
    let admin = applied(&pool, &redis, &people, &[SaleRole::Viewer]).await;
    sqlx::query("INSERT INTO inventory (product_id, name, initial_stock, stock) VALUES (1, 'one', 5, 5)")
        .execute(&pool)
        .await
        .unwrap();
    let viewer = people.connect(SaleRole::Viewer, &pool, &redis).await;

    let stock: i32 = sqlx::query_scalar("SELECT stock FROM inventory WHERE product_id = 1")
        .fetch_one(&viewer.mysql)
        .await
        .expect("a viewer may SELECT");
    assert_eq!(stock, 5);
    let update = sqlx::query("UPDATE inventory SET stock = 4 WHERE product_id = 1").execute(&viewer.mysql).await;
    assert_eq!(mysql_number(update.unwrap_err()), COMMAND_DENIED);
    let insert = sqlx::query(
        "INSERT INTO audit_log (actor, role, environment, action, target, reason, outcome) \
         VALUES ('v', 'viewer', 'sandbox', 'x', 'x', 'x', 'x')",
    )
    .execute(&viewer.mysql)
    .await;
    assert_eq!(mysql_number(insert.unwrap_err()), COMMAND_DENIED);

    let stock_key = redis.keys.stock(1);
    let mut as_viewer = viewer.redis.clone();
    let set: redis::RedisResult<()> = redis::cmd("SET").arg(&stock_key).arg(5).query_async(&mut as_viewer).await;
    assert_eq!(set.unwrap_err().code(), Some("NOPERM"));
    let _: () = redis::cmd("SET").arg(&stock_key).arg(5).query_async(&mut admin.redis.clone()).await.unwrap();
    let read: i64 = redis::cmd("GET").arg(&stock_key).query_async(&mut as_viewer).await.expect("a viewer may GET");
    assert_eq!(read, 5);
    let dry_run: String = redis::cmd("ACL")
        .arg("DRYRUN")
        .arg(people.user(SaleRole::Viewer))
        .arg("SET")
        .arg(&stock_key)
        .arg(5)
        .query_async(&mut admin.redis.clone())
        .await
        .unwrap();
    assert!(dry_run.contains("no permissions"), "ACL DRYRUN confirms: {dry_run}");
    // The exact reading runs its Lua script as the viewer.
    let readings =
        stockguard_core::recon::read_products(&viewer.mysql, &mut as_viewer, &viewer.keys, &[1]).await.unwrap();
    assert_eq!(readings[0].redis_stock, Some(5));

    let rights = roles::effective_rights(&viewer).await.expect("rights of a viewer, not a server error");
    assert_eq!(rights.mysql_account, format!("{}@%", people.user(SaleRole::Viewer)));
    assert_eq!(rights.redis_user.as_deref(), Some(people.user(SaleRole::Viewer).as_str()));
    assert_eq!(rights.rewrite.allowed, Some(false));
    assert!(
        rights.rewrite.reasons.contains(&roles::Reason::MysqlPrivilege {
            account: rights.mysql_account.clone(),
            privilege: "INSERT".into(),
            table: "rewrite_runs".into(),
        }),
        "{:?}",
        rights.rewrite.reasons
    );
    assert_eq!(rights.degrade.allowed, Some(false));
    assert_eq!(rights.approve_compensation.allowed, Some(false));
    assert_eq!(rights.run_drills.allowed, Some(false));
    // A viewer may not run ACL DRYRUN; Redis is asked by a queued and discarded command.
    assert!(rights.rewrite.reasons.iter().any(|r| r
        .to_string()
        .starts_with(&format!("Redis user {} may not SET {stock_key}", people.user(SaleRole::Viewer)))));
    assert_eq!(rights.read.allowed, Some(true), "{:?}", rights.read);
    let after: i64 = redis::cmd("GET").arg(&stock_key).query_async(&mut as_viewer).await.unwrap();
    assert_eq!(after, 5, "asking changed nothing");
}

#[sqlx::test(migrations = "./migrations")]
async fn an_oncall_may_update_inventory_and_set_the_stock_key_and_an_approver_may_not(pool: MySqlPool) {
    let redis = TestRedis::new("roles3").await;
    let people = People::new();
    let admin = applied(&pool, &redis, &people, &[SaleRole::Oncall, SaleRole::Approver]).await;
    sqlx::query("INSERT INTO inventory (product_id, name, initial_stock, stock) VALUES (1, 'one', 5, 5)")
        .execute(&pool)
        .await
        .unwrap();
    let stock_key = redis.keys.stock(1);

    let oncall = people.connect(SaleRole::Oncall, &pool, &redis).await;
    let updated = sqlx::query("UPDATE inventory SET stock = 4 WHERE product_id = 1").execute(&oncall.mysql).await;
    assert_eq!(updated.expect("an oncall may UPDATE inventory").rows_affected(), 1);
    let _: () = redis::cmd("SET")
        .arg(&stock_key)
        .arg(4)
        .query_async(&mut oncall.redis.clone())
        .await
        .expect("an oncall may SET the stock key");
    let elsewhere: redis::RedisResult<()> =
        redis::cmd("SET").arg("another-sale:{1}:stock").arg(4).query_async(&mut oncall.redis.clone()).await;
    assert_eq!(elsewhere.unwrap_err().code(), Some("NOPERM"), "not another prefix's keys");

    let rights = roles::effective_rights(&oncall).await.unwrap();
    assert_eq!(rights.rewrite.allowed, Some(true), "{:?}", rights.rewrite);
    assert_eq!(rights.degrade.allowed, Some(true), "{:?}", rights.degrade);
    assert_eq!(rights.execute_compensation.allowed, Some(true), "{:?}", rights.execute_compensation);

    let approver = people.connect(SaleRole::Approver, &pool, &redis).await;
    let set: redis::RedisResult<()> =
        redis::cmd("SET").arg(&stock_key).arg(5).query_async(&mut approver.redis.clone()).await;
    assert_eq!(set.unwrap_err().code(), Some("NOPERM"));
    let update = sqlx::query("UPDATE inventory SET stock = 5 WHERE product_id = 1").execute(&approver.mysql).await;
    assert_eq!(mysql_number(update.unwrap_err()), COMMAND_DENIED);
    // An approver never executes: no effect row, no outcome.
    let effect = sqlx::query("INSERT INTO compensation_effects (case_id, order_no, action) VALUES (1, 'x', 'NOTE')")
        .execute(&approver.mysql)
        .await;
    assert_eq!(mysql_number(effect.unwrap_err()), COMMAND_DENIED);
    let rights = roles::effective_rights(&approver).await.unwrap();
    assert_eq!(rights.approve_compensation.allowed, Some(true), "{:?}", rights.approve_compensation);
    assert_eq!(rights.execute_compensation.allowed, Some(false));
    assert_eq!(rights.rewrite.allowed, Some(false));
    drop(admin);
}

#[sqlx::test(migrations = "./migrations")]
async fn no_role_below_admin_may_update_or_delete_the_audit_log(pool: MySqlPool) {
    let redis = TestRedis::new("roles4").await;
    let people = People::new();
    let below_admin = [SaleRole::Viewer, SaleRole::Oncall, SaleRole::Approver, SaleRole::Facilitator];
    let _admin = applied(&pool, &redis, &people, &below_admin).await;
    for role in below_admin {
        let conns = people.connect(role, &pool, &redis).await;
        let update = sqlx::query("UPDATE audit_log SET reason = 'rewritten history'").execute(&conns.mysql).await;
        assert_eq!(mysql_number(update.unwrap_err()), COMMAND_DENIED, "{role} UPDATE");
        let delete = sqlx::query("DELETE FROM audit_log").execute(&conns.mysql).await;
        assert_eq!(mysql_number(delete.unwrap_err()), COMMAND_DENIED, "{role} DELETE");
        let seen: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM audit_log").fetch_one(&conns.mysql).await.unwrap();
        assert!(seen >= 1, "{role} reads the audit log");
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn a_person_moved_to_another_role_loses_the_rights_of_the_old_one(pool: MySqlPool) {
    let redis = TestRedis::new("roles5").await;
    let people = People::new();
    let admin = applied(&pool, &redis, &people, &[SaleRole::Oncall]).await;
    // The on-call's accounts, now given the viewer role.
    let mut spec = people.spec(&[SaleRole::Oncall]);
    spec.persons[0].role = SaleRole::Viewer;
    let env = |var: &str| (var == "PW_oncall").then(|| people.password(SaleRole::Oncall));
    let target = Target::of(&admin).await.unwrap();
    let moved = roles::apply(&roles::plan(&spec, &target, &env).unwrap(), &admin, "moved").await.unwrap();
    assert!(
        moved.ran.iter().any(|s| s.starts_with(&format!("REVOKE `{}_oncall`", people.role_prefix))),
        "{:?}",
        moved.ran
    );

    let conns = people.connect(SaleRole::Oncall, &pool, &redis).await;
    let update = sqlx::query("UPDATE inventory SET stock = 1").execute(&conns.mysql).await;
    assert_eq!(mysql_number(update.unwrap_err()), COMMAND_DENIED);
    let set: redis::RedisResult<()> =
        redis::cmd("SET").arg(redis.keys.stock(1)).arg(1).query_async(&mut conns.redis.clone()).await;
    assert_eq!(set.unwrap_err().code(), Some("NOPERM"));
    let rights = roles::effective_rights(&conns).await.unwrap();
    assert_eq!(rights.rewrite.allowed, Some(false));
    assert_eq!(rights.read.allowed, Some(true));
}

#[sqlx::test(migrations = "./migrations")]
async fn the_cli_plan_masks_passwords_and_apply_refuses_without_confirm(pool: MySqlPool) {
    let redis = TestRedis::new("roles6").await;
    let people = People::new();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("roles.toml");
    let user = people.user(SaleRole::Approver);
    std::fs::write(
        &file,
        format!(
            "role_prefix = \"{}\"\n[[person]]\nname = \"a\"\nrole = \"approver\"\nmysql_user = \"{user}\"\nredis_user = \"{user}\"\npassword_env = \"SG_TEST_PW\"\n",
            people.role_prefix
        ),
    )
    .unwrap();
    let mysql_url = support::mysql_url_of(&pool).await;
    let password = people.password(SaleRole::Approver);
    let stockguard = |args: &[&str]| {
        let config = tempfile::tempdir().unwrap();
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_stockguard"));
        cmd.args(args).env("STOCKGUARD_CONFIG_DIR", config.path());
        for k in support::PROFILE_OVERRIDES {
            cmd.env_remove(k);
        }
        cmd.env("STOCKGUARD_MYSQL_URL", &mysql_url)
            .env("STOCKGUARD_REDIS_URL", &redis.url)
            .env("STOCKGUARD_KEY_PREFIX", redis.keys.prefix())
            .env("STOCKGUARD_ENVIRONMENT", "sandbox")
            .env("SG_TEST_PW", &password)
            .output()
            .unwrap()
    };
    let file = file.to_str().unwrap();

    let plan = stockguard(&["roles", "plan", "--file", file]);
    let text = String::from_utf8_lossy(&plan.stdout);
    assert!(plan.status.success(), "{}", String::from_utf8_lossy(&plan.stderr));
    assert!(text.contains(&format!("SET DEFAULT ROLE `{}_approver` FOR '{user}'@'%'", people.role_prefix)), "{text}");
    assert!(text.contains("IDENTIFIED BY '***'") && text.contains(">***"), "{text}");
    assert!(!text.contains(&password), "the password is never printed");

    let refused = stockguard(&["roles", "apply", "--file", file]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--confirm"));
    let made: Option<String> =
        sqlx::query_scalar("SELECT CAST(User AS CHAR) FROM mysql.user WHERE CAST(User AS CHAR) = ?")
            .bind(&user)
            .fetch_optional(&pool)
            .await
            .unwrap();
    assert_eq!(made, None, "nothing was applied without --confirm");

    let apply = stockguard(&["roles", "apply", "--file", file, "--confirm"]);
    assert!(apply.status.success(), "{}", String::from_utf8_lossy(&apply.stderr));
    assert!(!String::from_utf8_lossy(&apply.stdout).contains(&password));

    let text = stockguard(&["roles", "show"]);
    let said = String::from_utf8_lossy(&text.stdout);
    for right in ["read", "rewrite", "degrade", "approve compensation", "execute compensation", "run drills"] {
        assert!(said.contains(right), "{right}: {said}");
    }
    assert!(said.contains("acknowledge alerts"), "every right is said: {said}");
    let show = stockguard(&["roles", "show", "--json"]);
    let rights: serde_json::Value = serde_json::from_slice(&show.stdout).expect("roles show --json prints JSON");
    assert_eq!(rights["rewrite"]["allowed"], serde_json::Value::Bool(true), "root may rewrite: {rights}");
}

#[sqlx::test(migrations = "./migrations")]
async fn an_oncall_rewrites_drifted_stock_with_its_own_accounts_and_a_viewers_rewrite_is_refused_by_the_servers(
    pool: MySqlPool,
) {
    use stockguard_core::rewrite::{self, Outcome, RewriteError, RewriteRequest};
    let redis = TestRedis::new("roles7").await;
    let people = People::new();
    let admin = applied(&pool, &redis, &people, &[SaleRole::Oncall, SaleRole::Viewer]).await;
    stockguard_engine::sandbox::seed(&admin, &mut |_| {}).await.unwrap();
    let high = stockguard_engine::sandbox::DEMO_PRODUCTS
        .iter()
        .find(|d| d.status == stockguard_core::recon::DriftStatus::RedisHigh)
        .unwrap()
        .id;

    // Both profiles say "oncall" (the settings' role): only the servers tell them apart.
    let viewer = people.connect(SaleRole::Viewer, &pool, &redis).await;
    let before: Option<i64> =
        redis::cmd("GET").arg(redis.keys.stock(high)).query_async(&mut admin.redis.clone()).await.unwrap();
    let refused = rewrite::rewrite(&viewer, &RewriteRequest::new(high, "viewer tries")).await.unwrap_err();
    // Redis refuses the rewrite lock first.
    assert!(matches!(&refused, RewriteError::Redis(e) if e.code() == Some("NOPERM")), "{refused}");
    let after: Option<i64> =
        redis::cmd("GET").arg(redis.keys.stock(high)).query_async(&mut admin.redis.clone()).await.unwrap();
    assert_eq!(after, before);

    let oncall = people.connect(SaleRole::Oncall, &pool, &redis).await;
    let result = rewrite::rewrite(&oncall, &RewriteRequest::new(high, "oncall repairs")).await.unwrap();
    assert_eq!(result.outcome, Outcome::Applied);
    assert_eq!(result.drift_after, Some(0));
}

#[sqlx::test(migrations = "./migrations")]
async fn an_oncall_enters_db_mode_and_leads_the_sale_back_with_its_own_accounts(pool: MySqlPool) {
    use stockguard_core::switch::{self, exit::DEFAULT_STALE_AFTER, ExitOptions, Scope};
    let redis = TestRedis::new("roles8").await;
    let people = People::new();
    let admin = applied(&pool, &redis, &people, &[SaleRole::Oncall]).await;
    crate::sale::open_sale(&admin, 801, 100, 1).await;
    let oncall = people.connect(SaleRole::Oncall, &pool, &redis).await;

    let wait = std::time::Duration::from_millis(300);
    let toggled = switch::enter_db_mode(&oncall, Scope::Global, "Redis suspected", wait, DEFAULT_STALE_AFTER, &|_| {})
        .await
        .expect("an oncall may enter DB mode");
    assert!(toggled.change.revision > 0);
    let opts = ExitOptions { ack_timeout: wait, ..ExitOptions::new(Scope::Global, "Redis back") };
    let report = switch::guided_exit(&oncall, &opts, &|_| {}).await.expect("an oncall may lead the sale back");
    assert!(report.normal_revision > report.pause_revision);
}

#[sqlx::test(migrations = "./migrations")]
async fn the_catalogue_knows_every_table_of_the_schema(pool: MySqlPool) {
    let mut tables: Vec<String> = sqlx::query_scalar(
        "SELECT CAST(TABLE_NAME AS CHAR) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() \
         AND TABLE_NAME <> '_sqlx_migrations'",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    tables.sort_unstable();
    let mut known: Vec<&str> = roles::catalogue::TABLES.to_vec();
    known.sort_unstable();
    assert_eq!(tables, known, "a new table needs its grants decided in roles/catalogue.rs");
}

#[sqlx::test(migrations = "./migrations")]
async fn compensation_runs_on_role_accounts_an_oncall_makes_an_approver_checks_another_oncall_executes(
    pool: MySqlPool,
) {
    use stockguard_core::compensation::execute::execute;
    use stockguard_core::compensation::open::open_case;
    use stockguard_core::compensation::plan::{set_plan, Choice, Lines};
    use stockguard_core::compensation::workflow::{take, StepKind};
    use stockguard_core::compensation::{Action, CaseStatus, CompensationError, LineReason};
    const P: u64 = 41;
    let redis = TestRedis::new("roles9").await;
    let people = People::new();
    let admin = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    let mut spec = people.spec(&[SaleRole::Oncall, SaleRole::Approver]);
    let second = stockguard_core::roles::Person {
        name: "oncall2".into(),
        mysql_user: people.second_oncall(),
        redis_user: None,
        ..spec.persons[0].clone()
    };
    spec.persons.push(second);
    let env = |var: &str| SaleRole::ALL.iter().find(|r| var == format!("PW_{r}")).map(|r| people.password(*r));
    let target = Target::of(&admin).await.unwrap();
    roles::apply(&roles::plan(&spec, &target, &env).unwrap(), &admin, "compensation people").await.unwrap();

    // Two units sold three times: the last order is beyond stock.
    crate::sale::put_on_sale(&pool, &mut admin.redis.clone(), &admin.keys, P, (2, 0), 1).await;
    support::oversold::seed(&pool, P, 2, 3, 500, "R").await;

    let maker = people.connect(SaleRole::Oncall, &pool, &redis).await.mysql;
    let checker = people.connect(SaleRole::Approver, &pool, &redis).await.mysql;
    let mut executor_url = url::Url::parse(&support::mysql_url_of(&pool).await).unwrap();
    executor_url.set_username(&people.second_oncall()).unwrap();
    executor_url.set_password(Some(&people.password(SaleRole::Oncall))).unwrap();
    let executor = MySqlPool::connect(executor_url.as_str()).await.expect("the second on-call connects");

    assert!(open_case(&checker, P).await.is_err(), "an approver does not open cases");
    let case_id = open_case(&maker, P).await.expect("an oncall opens the case").case_id;
    let plan = [Choice {
        lines: Lines::Reason(LineReason::Oversold),
        action: Action::CancelRefund,
        amount_cents: None,
        note: String::new(),
    }];
    set_plan(&maker, case_id, &plan).await.expect("an oncall plans");
    take(&maker, case_id, StepKind::Propose, "refund the order beyond stock").await.expect("an oncall proposes");
    // The second on-call (not the maker) may not approve: a verdict is an approver's alone,
    // and a raw APPROVE step without one is refused too.
    let oncall_verdict = take(&executor, case_id, StepKind::Approve, "looks fine").await;
    assert!(matches!(oncall_verdict, Err(CompensationError::Db(_))), "{oncall_verdict:?}");
    let raw = sqlx::query("INSERT INTO compensation_steps (case_id, step, reason) VALUES (?, 'APPROVE', 'raw')")
        .bind(case_id)
        .execute(&executor)
        .await
        .expect_err("a raw approval by on-call");
    assert!(raw.to_string().contains("approvers only"), "{raw}");
    let approved = take(&checker, case_id, StepKind::Approve, "checked").await.expect("an approver approves");
    assert_eq!(approved.status, CaseStatus::Approved);
    assert!(matches!(execute(&checker, case_id, &|_, _, _| {}).await, Err(CompensationError::Refused(_))));
    execute(&executor, case_id, &|_, _, _| {}).await.expect("another oncall executes");
    let cancelled: String = sqlx::query_scalar("SELECT CAST(status AS CHAR) FROM orders WHERE order_no = 'R003'")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(cancelled, "CANCELLED");

    // Raw SQL as the maker cannot skip the checker: the case row is the triggers' alone, a
    // case is born a draft, and a refund event without its effect is refused.
    let approve_by_hand = sqlx::query("UPDATE compensation_cases SET status = 'APPROVED' WHERE id = ?")
        .bind(case_id)
        .execute(&maker)
        .await
        .expect_err("on-call may not update a case");
    assert!(
        approve_by_hand.to_string().contains("1142") || approve_by_hand.to_string().contains("denied"),
        "{approve_by_hand}"
    );
    sqlx::query("INSERT INTO inventory (product_id, name, initial_stock, stock) VALUES (9999, 'another', 1, 1)")
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query(
        "INSERT INTO compensation_cases (product_id, status, opened_by, maker) VALUES (9999, 'APPROVED', 'x', 'y')",
    )
    .execute(&maker)
    .await
    .unwrap();
    let born: String =
        sqlx::query_scalar("SELECT CAST(status AS CHAR) FROM compensation_cases WHERE product_id = 9999")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(born, "DRAFT");
    let event = sqlx::query(
        "INSERT INTO compensation_events (idempotency_key, kind, case_id, order_no, user_id, action, amount_cents) \
         VALUES ('forged', 'compensation.executed', ?, 'R001', 1001, 'CANCEL_REFUND', 500)",
    )
    .bind(case_id)
    .execute(&maker)
    .await
    .expect_err("a refund event written by hand");
    assert_eq!(mysql_number(event), COMMAND_DENIED, "no role writes an event: only an effect's trigger does");
    executor.close().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn a_facilitator_may_run_drills_but_not_compensate_and_may_not_apply_roles_itself(pool: MySqlPool) {
    let redis = TestRedis::new("roles10").await;
    let people = People::new();
    let admin = applied(&pool, &redis, &people, &[SaleRole::Facilitator]).await;
    let facilitator = people.connect(SaleRole::Facilitator, &pool, &redis).await;
    let rights = roles::effective_rights(&facilitator).await.unwrap();
    assert_eq!(rights.run_drills.allowed, Some(true), "{:?}", rights.run_drills);
    assert_eq!(rights.approve_compensation.allowed, Some(false));
    assert_eq!(rights.execute_compensation.allowed, Some(false));

    // Applying roles needs an admin connection: a typed refusal, not a raw server error.
    let target = Target::of(&facilitator).await.unwrap();
    let refused = roles::apply(&people.plan(&[SaleRole::Viewer], &target), &facilitator, "not mine").await;
    assert!(matches!(refused, Err(roles::RolesError::MysqlNotAdmin { .. })), "{refused:?}");
    drop(admin);
}

#[sqlx::test(migrations = "./migrations")]
async fn every_actions_rule_is_what_the_server_grants_each_roles_own_account(pool: MySqlPool) {
    use stockguard_core::action::Action;
    use stockguard_core::profile::Role;
    let redis = TestRedis::new("rl-act").await;
    let people = People::new();
    let _admin = applied(&pool, &redis, &people, &SaleRole::ALL).await;
    for role in Role::ALL {
        let person = people.connect(SaleRole::from(role), &pool, &redis).await;
        for action in Action::ALL {
            let mut server_allows = true;
            for (table, privilege) in action.writes() {
                // The privilege is checked before a row is touched: a statement that writes no
                // row says whether the account may, and changes nothing. It names every column
                // a row can be given (an INSERT naming fewer is refused for a
                // missing default before any privilege is asked).
                let columns: String = sqlx::query_scalar(
                    "SELECT GROUP_CONCAT(COLUMN_NAME ORDER BY ORDINAL_POSITION) FROM information_schema.COLUMNS \
                     WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND EXTRA NOT LIKE '%GENERATED%'",
                )
                .bind(table)
                .fetch_one(&pool)
                .await
                .unwrap();
                let column = columns.split(',').next().unwrap();
                let sql = match privilege {
                    roles::Privilege::Insert => {
                        format!("INSERT INTO {table} ({columns}) SELECT {columns} FROM {table} WHERE 1 = 0")
                    }
                    roles::Privilege::Update => format!("UPDATE {table} SET {column} = {column} WHERE 1 = 0"),
                    other => panic!("no action writes with {other:?}"),
                };
                match sqlx::query(&sql).execute(&person.mysql).await {
                    Ok(_) => {}
                    Err(e) => {
                        assert_eq!(mysql_number(e), COMMAND_DENIED, "{role} {action}: {sql}");
                        server_allows = false;
                    }
                }
            }
            assert_eq!(action.allowed_for(role), server_allows, "{role} may {action}: the rule and the server agree");
        }
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn on_the_state_database_oncall_and_admin_record_adapter_baselines_and_the_other_roles_only_read_them(
    pool: MySqlPool,
) {
    use stockguard_core::action::{Action, Refused};
    use stockguard_core::adapter::{state, AdapterError, AdapterFile};
    use stockguard_core::profile::Role;
    let redis = TestRedis::new("rl-base").await;
    let people = People::new();
    let _admin = applied(&pool, &redis, &people, &SaleRole::ALL).await;
    sqlx::query(
        "INSERT INTO adapter_baselines (sale, product_id, initial_stock, reason, recorded_by) \
         VALUES ('their-sale', 1, 100, 'sale opens', 'root')",
    )
    .execute(&pool)
    .await
    .unwrap();
    // Which of INSERT, UPDATE, DELETE each role's own account may, by raw SQL.
    let expected = [
        (SaleRole::Oncall, [true, true, false]),
        (SaleRole::Admin, [true, true, true]),
        (SaleRole::Approver, [false, false, false]),
        (SaleRole::Viewer, [false, false, false]),
        (SaleRole::Facilitator, [false, false, false]),
    ];
    for (n, (role, [insert, update, delete])) in expected.into_iter().enumerate() {
        let person = people.connect(role, &pool, &redis).await;
        let seen: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM adapter_baselines").fetch_one(&person.mysql).await.unwrap();
        assert!(seen >= 1, "{role} reads the baselines");
        let product = 10 + n as i64;
        let statements = [
            (
                insert,
                format!(
                    "INSERT INTO adapter_baselines (sale, product_id, initial_stock, reason, recorded_by) \
                     VALUES ('their-sale', {product}, 5, 'by {role}', USER())"
                ),
            ),
            (
                update,
                "UPDATE adapter_baselines SET initial_stock = 999 WHERE sale = 'their-sale' AND product_id = 1".into(),
            ),
            (delete, format!("DELETE FROM adapter_baselines WHERE sale = 'their-sale' AND product_id = {product}")),
        ];
        for (allowed, sql) in statements {
            match sqlx::query(&sql).execute(&person.mysql).await {
                Ok(_) => assert!(allowed, "{role} was let run {sql}"),
                Err(e) => {
                    assert!(!allowed, "{role} was refused {sql}: {e}");
                    assert_eq!(mysql_number(e), COMMAND_DENIED, "{role}: the grant refuses {sql}");
                }
            }
        }
        // The console's rule says the same as the server, before trying.
        let as_profile = Role::ALL.into_iter().find(|r| SaleRole::from(*r) == role).expect("a profile role");
        let may = Action::RecordBaselines.allowed_for(as_profile);
        assert_eq!(may, insert && update, "{role}: the rule and the grants agree");
    }

    // Through the core, as `adapter baseline` records them: refused up front for a facilitator.
    let file = AdapterFile::parse(
        "[sale]\nname = \"their-sale\"\n[stock]\ntable = \"goods\"\nproduct = \"id\"\nremaining = \"stock\"\ninitial = \"baseline\"\n",
        std::path::Path::new("their-sale.toml"),
    )
    .unwrap();
    let mut facilitator = people.settings(SaleRole::Facilitator, &pool, &redis).await;
    facilitator.role = Role::Facilitator;
    let refused = state::record_baselines(&pool, &facilitator, &file, &[], "top-up").await.unwrap_err();
    assert!(
        matches!(refused, AdapterError::NotAllowed(Refused::Role { action: Action::RecordBaselines, .. })),
        "{refused}"
    );
    let mut oncall = people.connect(SaleRole::Oncall, &pool, &redis).await;
    oncall.settings.role = Role::Oncall;
    state::record_baselines(&oncall.mysql, &oncall.settings, &file, &[], "top-up")
        .await
        .expect("an on-call records baselines with its own account");
}
