//! The process's tunnels: one session per bastion and one forward per target, opened on first
//! use and kept while the process runs, so that every pool and link a connection opens
//! (the pool, the replica, Redis, an adapter sale's own) goes through the same forward.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

use tokio::sync::Mutex;

use super::{Bastion, BastionConfig, Forward, TunnelError};

/// Bastions by address and key, and their forwards by target.
#[derive(Default)]
struct Open {
    bastions: HashMap<(String, std::path::PathBuf), Arc<Bastion>>,
    forwards: HashMap<(String, std::path::PathBuf, String, u16), Forward>,
}

fn open() -> &'static Mutex<Open> {
    static OPEN: OnceLock<Mutex<Open>> = OnceLock::new();
    OPEN.get_or_init(Default::default)
}

/// The loopback address that reaches `host:port` through the bastion of `config`: the
/// forward opened before when its session still stands, else a new one.
pub async fn forward_to(config: &BastionConfig, host: &str, port: u16) -> Result<SocketAddr, TunnelError> {
    let mut open = open().lock().await;
    let bastion_key = (config.address.to_string(), config.key.clone());
    let forward_key = (bastion_key.0.clone(), bastion_key.1.clone(), host.to_string(), port);
    let standing = open.bastions.get(&bastion_key).filter(|b| !b.handle.is_closed()).cloned();
    let bastion = match standing {
        Some(bastion) => {
            if let Some(forward) = open.forwards.get(&forward_key) {
                return Ok(forward.local_addr());
            }
            bastion
        }
        None => {
            open.forwards.retain(|(address, key, _, _), _| (address, key) != (&bastion_key.0, &bastion_key.1));
            let bastion = Arc::new(Bastion::connect(config).await?);
            open.bastions.insert(bastion_key, bastion.clone());
            bastion
        }
    };
    let forward = bastion.forward(host, port).await?;
    let local = forward.local_addr();
    open.forwards.insert(forward_key, forward);
    Ok(local)
}
