//! `sqlx::migrate!` embeds the workspace's `migrations/` at compile time; without this, adding
//! a migration does not rebuild the core that embeds them.
fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
}
