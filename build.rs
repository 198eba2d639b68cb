//! `sqlx::migrate!` (and `#[sqlx::test(migrations = ...)]`) embed `migrations/` at compile
//! time; without this, adding a migration does not rebuild what embeds them.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
