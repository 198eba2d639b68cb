//! The app's connection: resolved from a profile (or the environment overrides) on first use,
//! then kept open.

use stockguard::connect::Connections;
use stockguard::profile::resolve_for_process;
use tokio::sync::OnceCell;

use crate::error::DesktopError;

pub struct AppState {
    profile: Option<String>,
    connections: OnceCell<Connections>,
}

/// `--profile NAME` or `--profile=NAME` from the command line.
pub fn profile_from_args(args: impl Iterator<Item = String>) -> Option<String> {
    let args: Vec<String> = args.collect();
    args.iter().enumerate().find_map(|(i, a)| {
        a.strip_prefix("--profile=")
            .map(str::to_string)
            .or_else(|| (a == "--profile").then(|| args.get(i + 1).cloned()).flatten())
    })
}

impl AppState {
    pub fn new(profile: Option<String>) -> Self {
        Self { profile, connections: OnceCell::new() }
    }

    /// The open connection, opened on first use.
    pub async fn connections(&self) -> Result<&Connections, DesktopError> {
        self.connections
            .get_or_try_init(|| async {
                let settings = resolve_for_process(self.profile.as_deref()).await?;
                Ok(Connections::open(settings).await?)
            })
            .await
    }
}
