//! The process's one rustls crypto provider (ring).
//!
//! sqlx (`tls-rustls`, ring), lapin (`rustls--ring`) and the `redis` crate
//! (`tokio-rustls-comp`) all speak TLS through rustls 0.23. sqlx and lapin name ring
//! themselves; the `redis` crate asks rustls for the process's default provider, which rustls
//! cannot pick on its own once two are built in (other crates of the workspace bring
//! aws-lc-rs). So [`install`] makes ring the process default before any Redis TLS connection:
//! every TLS connection of the process then runs on ring.
//!
//! A leaf: it imports nothing of this crate, so [`crate::redis_link`] and [`crate::tls`] (which
//! reads a profile's files) can both call it without naming each other.

/// Makes ring the process's default rustls crypto provider (once; later calls do nothing).
pub fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Err only when a provider is installed already: then that one stays.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
