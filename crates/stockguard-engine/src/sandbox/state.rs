//! `.sandbox/state.json`: which servers `sandbox up` started itself (pid, port, folder).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{io_err, SandboxError};

/// A server process the sandbox started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartedServer {
    pub pid: u32,
    pub port: u16,
    pub data_dir: PathBuf,
    pub log: PathBuf,
}

/// What the sandbox is using and what it started.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SandboxState {
    pub mysql_url: Option<String>,
    pub redis_url: Option<String>,
    pub mysql: Option<StartedServer>,
    pub redis: Option<StartedServer>,
    /// The nodes of a private Redis Cluster (`up --redis-cluster`), masters first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redis_cluster: Option<Vec<StartedServer>>,
}

impl SandboxState {
    pub fn path(dir: &Path) -> PathBuf {
        dir.join("state.json")
    }

    pub fn load(dir: &Path) -> Result<Self, SandboxError> {
        let path = Self::path(dir);
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .map_err(|e| SandboxError::State { path: path.display().to_string(), reason: e.to_string() }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(io_err(&path)(e)),
        }
    }

    pub fn save(&self, dir: &Path) -> Result<(), SandboxError> {
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
        let path = Self::path(dir);
        let text = serde_json::to_string_pretty(self).expect("state serializes");
        std::fs::write(&path, text).map_err(io_err(&path))
    }
}
