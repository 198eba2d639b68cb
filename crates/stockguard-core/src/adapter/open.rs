//! An adapter sale, opened: its file, the connections to the sale that the file needs (its
//! database only when the file names a table, its Redis only when it names keys, so a
//! counters-only sale needs no MySQL URL) and Stockguard's own state database, when there is
//! one. The CLI and the window open a sale this one way.

use std::collections::HashMap;
use std::path::Path;

use secrecy::ExposeSecret as _;
use sqlx::MySqlPool;

use super::{state, AdapterError, AdapterFile, SaleLinks};
use crate::connect::{connect_mysql, connect_redis};
use crate::profile::ConnectionSettings;
use crate::redis_link::RedisLink;

/// A sale read over its adapter, connected.
pub struct OpenedSale {
    pub file: AdapterFile,
    pub mysql: Option<MySqlPool>,
    pub redis: Option<RedisLink>,
    pub state: Option<MySqlPool>,
}

/// Whether the sale `file` describes is read in a database (else: Redis counters only).
pub fn needs_db(file: &AdapterFile) -> bool {
    file.stock.is_some() || file.orders.is_some()
}

impl OpenedSale {
    /// Loads the adapter file at `path` and connects to what it names with `settings` (the
    /// profile's servers are the sale's own); `state_url` (a flag or its variable) takes
    /// precedence over the profile's state database.
    pub async fn open(
        path: &Path,
        settings: &ConnectionSettings,
        state_url: Option<&str>,
    ) -> Result<Self, AdapterError> {
        let file = AdapterFile::load(path)?;
        Self::connect(file, settings, state_url).await
    }

    /// Connects to what `file` names, as [`OpenedSale::open`].
    pub async fn connect(
        file: AdapterFile,
        settings: &ConnectionSettings,
        state_url: Option<&str>,
    ) -> Result<Self, AdapterError> {
        let mysql = match needs_db(&file) {
            true => Some(connect_mysql(settings).await.map_err(AdapterError::Connect)?),
            false => None,
        };
        let redis = match &file.redis {
            Some(_) => Some(connect_redis(settings).await.map_err(AdapterError::Connect)?),
            None => None,
        };
        let profile_state = settings.state_url.as_ref().map(|url| url.expose_secret().to_string());
        let state = match state_url.map(str::to_string).or(profile_state) {
            Some(url) => Some(state::open_beside(&url, &file, mysql.as_ref()).await?),
            None => None,
        };
        Ok(Self { file, mysql, redis, state })
    }

    pub fn links(&self) -> SaleLinks<'_, RedisLink> {
        SaleLinks { db: self.mysql.as_ref(), redis: self.redis.as_ref() }
    }

    /// The recorded baselines (none without a state database).
    pub async fn baselines(&self) -> Result<HashMap<crate::product_id::ProductId, i64>, AdapterError> {
        match &self.state {
            Some(pool) => state::baselines(pool, &self.file.sale.name).await,
            None => Ok(HashMap::new()),
        }
    }

    /// The state database, or why a record of the console's cannot be kept for this sale.
    pub fn state(&self) -> Result<&MySqlPool, AdapterError> {
        self.state.as_ref().ok_or(AdapterError::NoStateDb)
    }
}
