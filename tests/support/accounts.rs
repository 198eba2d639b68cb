//! MySQL accounts of a test's own, one per person, as production has them: rules the server
//! keys on who is connected (the compensation workflow's four eyes) need distinct accounts.
//! Accounts are server-wide, so each test drops its own at its end ([`forget`]).

use sqlx::MySqlPool;

/// A new account for `role`, with every right on the test's database; its URL.
pub async fn account(root: &MySqlPool, role: &str) -> String {
    make(root, role, true, "ALL").await
}

/// A new account that may only read the test's database: every write it tries is refused by
/// the server itself (a real failure at a real step, no mock); its URL.
pub async fn reader(root: &MySqlPool, role: &str) -> String {
    make(root, role, true, "SELECT").await
}

/// The same without a password, for a console profile (a profile's URL never holds one; the
/// desktop keeps passwords in the OS keychain, which a test has none of).
pub async fn account_without_password(root: &MySqlPool, role: &str) -> String {
    make(root, role, false, "ALL").await
}

async fn make(root: &MySqlPool, role: &str, with_password: bool, privileges: &str) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
    let name = format!("sgt_{role}_{:06x}", (nanos ^ std::process::id()) & 0xff_ffff);
    let db: String = sqlx::query_scalar("SELECT DATABASE()").fetch_one(root).await.unwrap();
    let identified = if with_password { format!(" IDENTIFIED BY 'pw-{name}'") } else { String::new() };
    sqlx::query(&format!("CREATE USER '{name}'@'%'{identified}")).execute(root).await.unwrap();
    sqlx::query(&format!("GRANT {privileges} ON `{db}`.* TO '{name}'@'%'")).execute(root).await.unwrap();
    sqlx::query("CREATE TABLE IF NOT EXISTS test_accounts (name VARCHAR(64) PRIMARY KEY)").execute(root).await.unwrap();
    sqlx::query("INSERT INTO test_accounts (name) VALUES (?)").bind(&name).execute(root).await.unwrap();
    let mut url = url::Url::parse(&super::mysql_url_of(root).await).unwrap();
    url.set_username(&name).unwrap();
    if with_password {
        url.set_password(Some(&format!("pw-{name}"))).unwrap();
    }
    url.to_string()
}

/// A pool connected as a new account for `role`.
pub async fn person(root: &MySqlPool, role: &str) -> MySqlPool {
    let url = account(root, role).await;
    sqlx::mysql::MySqlPoolOptions::new().max_connections(4).connect(&url).await.expect("the person's account connects")
}

/// Drops the accounts this test made.
pub async fn forget(root: &MySqlPool) {
    let names: Vec<String> =
        sqlx::query_scalar("SELECT name FROM test_accounts").fetch_all(root).await.unwrap_or_default();
    for name in names {
        sqlx::query(&format!("DROP USER IF EXISTS '{name}'@'%'")).execute(root).await.unwrap();
    }
}
