//! "Attach a sale" (the desktop's Connections screen): a sale Stockguard did not build,
//! attached in minutes. From the sale's URLs ([`AttachTarget`]) the proposal of `adapter init`
//! comes back as a form, checked field by field ([`propose`]); each edit is checked again with
//! a reading of the first products ([`preview`]); [`save`] writes the adapter file beside the
//! profiles file, saves a profile naming it (passwords to the keychain, as every profile's),
//! and, when the sale stores no initial stock, records the baselines (audited, in the state
//! database), as `stockguard adapter baseline` does. Only the state database is written.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use secrecy::{ExposeSecret as _, SecretString};
use serde::{Deserialize, Serialize};
use sqlx::MySqlPool;

use super::init::fields::{check_form, FormCheck};
use super::init::form::{FieldProblem, InflightFields, ProposalForm};
use super::init::{gather, InitOptions};
use super::state::{self, Baseline};
use super::{db, read, AdapterError, SaleLinks};
use crate::action::{Action, Refused};
use crate::connect::{connect_mysql, connect_redis, ConnectError};
use crate::profile::manage::{self, SavedPasswords};
use crate::profile::{
    parse_redis_url, parse_url, ConnectionSettings, EnvOverrides, EnvironmentKind, KeychainStore, Profile,
    ProfileError, ProfileStore, Role, SecretSlot, SecretStore, MYSQL_SCHEMES,
};
use crate::recon::DriftStatus;
use crate::redis_link::RedisLink;

/// The products the preview reads: the sale's first ones.
pub const PREVIEW_PRODUCTS: usize = 5;

/// Keys sampled at most by the proposal.
const SCAN_LIMIT: usize = 20_000;

/// Where the sale is, as the person typed it: URLs without passwords, the passwords apart
/// (they go to the keychain with the profile, never into a file or back to the window).
#[derive(Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AttachTarget {
    pub mysql_url: String,
    pub mysql_password: Option<String>,
    /// One server, or a cluster's seed nodes separated by commas.
    pub redis_url: String,
    pub redis_password: Option<String>,
    /// The RabbitMQ the sale's queue is on, when it has one (as the file will name it).
    pub amqp_url: Option<String>,
    /// Stockguard's own database for the sale (baselines, audit); blank: none.
    pub state_url: Option<String>,
    pub state_password: Option<String>,
    /// Sample only keys matching this `SCAN` pattern (blank: every key).
    pub keys: Option<String>,
}

/// The profile the attached sale is saved as.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AttachProfile {
    pub name: String,
    /// None until the person chooses: a default would be a guess.
    pub environment: Option<EnvironmentKind>,
    pub role: Role,
}

/// What went wrong attaching a sale; each step named.
#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    #[error(transparent)]
    Profile(#[from] ProfileError),
    #[error(transparent)]
    Connect(#[from] ConnectError),
    #[error(transparent)]
    Adapter(#[from] AdapterError),
    #[error(transparent)]
    Refused(#[from] Refused),
    /// The form is not yet an adapter file, or names what the sale does not have.
    #[error("the form is not yet an adapter file of this sale: {}", .0.iter().map(|p| p.detail.as_str()).collect::<Vec<_>>().join("; "))]
    Form(Vec<FieldProblem>),
    #[error("choose the profile's environment (production, staging or sandbox)")]
    NoEnvironment,
    /// The sale stores no initial stock: the baseline recorded on saving needs a reason.
    #[error("a reason is required: the baselines recorded for the sale go to the audit log")]
    NoReason,
    #[error("cannot write the adapter file {path}")]
    WriteFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The sale's servers, open.
struct Open {
    db: MySqlPool,
    redis: RedisLink,
}

impl Open {
    fn links(&self) -> SaleLinks<'_, RedisLink> {
        SaleLinks { db: Some(&self.db), redis: Some(&self.redis) }
    }

    async fn close(self) {
        self.db.close().await;
    }
}

fn blank_is_none(v: &Option<String>) -> Option<&str> {
    v.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

/// `url` with `password` set (on each seed of a cluster's list).
fn with_password(what: &'static str, url: &str, password: Option<&str>) -> Result<SecretString, ProfileError> {
    let mut seeds =
        if what == "Redis" { parse_redis_url(what, url)? } else { vec![parse_url(what, url, MYSQL_SCHEMES)?] };
    if let Some(pw) = password {
        for seed in &mut seeds {
            seed.set_password(Some(pw)).map_err(|()| ProfileError::MalformedUrl {
                what,
                url: crate::profile::redact(url),
                reason: "cannot hold a password".into(),
            })?;
        }
    }
    Ok(SecretString::from(seeds.iter().map(url::Url::to_string).collect::<Vec<_>>().join(",")))
}

impl AttachTarget {
    /// Settings to connect with (and, for the baseline, to act as `who`).
    fn settings(&self, who: Option<(&AttachProfile, EnvironmentKind)>) -> Result<ConnectionSettings, ProfileError> {
        let mysql = with_password("MySQL", self.mysql_url.trim(), blank_is_none(&self.mysql_password))?;
        let redis = with_password("Redis", self.redis_url.trim(), blank_is_none(&self.redis_password))?;
        let environment = who.map_or(EnvironmentKind::Production, |(_, e)| e);
        let mut s = ConnectionSettings::from_urls(
            environment,
            mysql.expose_secret(),
            redis.expose_secret(),
            crate::keys::DEFAULT_PREFIX,
        );
        s.actor = EnvOverrides::from_process_env().actor.unwrap_or_else(|| "unknown".into());
        if let Some((profile, _)) = who {
            (s.profile_name, s.role) = (Some(profile.name.clone()), profile.role);
        }
        Ok(s)
    }

    async fn open(&self) -> Result<Open, AttachError> {
        let settings = self.settings(None)?;
        let db = connect_mysql(&settings).await?;
        let redis = connect_redis(&settings).await?;
        Ok(Open { db, redis })
    }

    fn state_url(&self) -> Result<Option<SecretString>, ProfileError> {
        match blank_is_none(&self.state_url) {
            Some(url) => with_password("state database", url, blank_is_none(&self.state_password)).map(Some),
            None => Ok(None),
        }
    }
}

/// The proposal of `adapter init` as a form, checked, and what it could not decide.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Proposed {
    pub check: FormCheck,
    pub undecided: Vec<String>,
    pub keys_sampled: usize,
}

/// Reads the sale (reads only) and proposes its form. A RabbitMQ URL given and no stream
/// found: the in-flight source is that RabbitMQ, its queue for the person to name.
pub async fn propose(target: &AttachTarget) -> Result<Proposed, AttachError> {
    let sale = target.open().await?;
    let keys = blank_is_none(&target.keys).unwrap_or("*").to_string();
    let opts = InitOptions { name: None, keys, scan_limit: SCAN_LIMIT };
    let proposed = async {
        let gathered = gather(Some(&sale.db), Some(&sale.redis), &opts).await?;
        let mut form = ProposalForm::from_guesses(&gathered);
        if let (Some(url), InflightFields::None) = (blank_is_none(&target.amqp_url), &form.inflight) {
            form.inflight = InflightFields::Rabbitmq {
                url: url.to_string(),
                queue: String::new(),
                product_field: None,
                management_url: None,
            };
        }
        let check = check_form(&form, Some(&sale.db), Some(&sale.redis)).await?;
        Ok::<_, AdapterError>(Proposed { check, undecided: gathered.undecided, keys_sampled: gathered.keys_sampled })
    }
    .await;
    sale.close().await;
    Ok(proposed?)
}

/// One product of the preview: the reading as the board would show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PreviewRow {
    pub product_id: crate::product_id::ProductId,
    /// The display name, when the file names its column (empty otherwise).
    pub name: String,
    pub status: DriftStatus,
    pub initial_stock: i64,
    /// `column`, `number`, `baseline`, or `none` (recorded when the sale is attached).
    pub initial_source: String,
    pub db_stock: i64,
    pub live_orders_qty: i64,
    pub redis_stock: Option<i64>,
    pub expected_redis: i64,
    /// `None` while the product is not settled.
    pub drift: Option<i64>,
    pub in_flight: i64,
    pub settled: bool,
}

/// The form checked again and, when it is clean, a reading of the sale's first products.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Previewed {
    pub check: FormCheck,
    pub readings: Vec<PreviewRow>,
}

/// Checks the form and reads the first [`PREVIEW_PRODUCTS`] products through it (reads only).
pub async fn preview(target: &AttachTarget, form: &ProposalForm) -> Result<Previewed, AttachError> {
    let sale = target.open().await?;
    let previewed = read_first(&sale, form).await;
    sale.close().await;
    Ok(previewed?)
}

async fn read_first(sale: &Open, form: &ProposalForm) -> Result<Previewed, AdapterError> {
    let check = check_form(form, Some(&sale.db), Some(&sale.redis)).await?;
    let file = match (check.is_clean(), check.form.to_file()) {
        (true, Ok(file)) => file,
        _ => return Ok(Previewed { check, readings: vec![] }),
    };
    let mut ids = db::product_ids(Some(&sale.db), &file).await?;
    ids.truncate(PREVIEW_PRODUCTS);
    let mut readings = read(&file, &sale.links(), &HashMap::new(), &ids).await?;
    readings.sort_by(|a, b| a.reading.product_id.cmp(&b.reading.product_id));
    let readings = readings
        .into_iter()
        .map(|a| {
            let r = a.reading;
            PreviewRow {
                product_id: r.product_id,
                name: r.name,
                status: r.status,
                initial_stock: r.initial_stock,
                initial_source: a.initial_source.to_string(),
                db_stock: r.db_stock,
                live_orders_qty: r.live_orders_qty,
                redis_stock: r.redis_stock,
                expected_redis: r.expected_redis,
                drift: r.drift,
                in_flight: r.in_flight,
                settled: r.settled,
            }
        })
        .collect();
    Ok(Previewed { check, readings })
}

/// What saving an attached sale did.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Attached {
    pub profile: String,
    /// The adapter file written, beside the profiles file.
    pub adapter: String,
    /// The baselines recorded (none when the sale stores its initial stock).
    pub baselines: Vec<Baseline>,
    /// Where its passwords come from: the keychain, or (on a machine without one) the
    /// environment variables named.
    pub passwords: SavedPasswords,
}

/// The adapter file of profile `name`, beside the profiles file `profiles`.
pub fn adapter_path(profiles: &Path, name: &str) -> PathBuf {
    profiles.with_file_name(format!("{name}.adapter.toml"))
}

/// Where an attached sale is saved: the profiles file (the adapter file goes beside it) and
/// the keychain its passwords go to.
pub struct SaveTo {
    pub profiles: PathBuf,
    pub secrets: Arc<dyn SecretStore>,
}

impl SaveTo {
    /// The default profiles file and the OS keychain: where every profile is saved.
    pub fn default_place() -> Result<Self, ProfileError> {
        Ok(Self { profiles: ProfileStore::default_path()?, secrets: Arc::new(KeychainStore) })
    }
}

/// Saves the attached sale: checks the form once more (nothing is written unless it is a clean
/// adapter file of this sale), writes the adapter file beside the profiles file (replacing the
/// one this profile had), saves the profile naming it with its passwords in the keychain, and
/// records the baselines (`reason` goes to the audit log) when the file's initial stock is
/// `baseline`.
pub async fn save(
    to: &SaveTo,
    target: &AttachTarget,
    form: &ProposalForm,
    who: &AttachProfile,
    reason: &str,
) -> Result<Attached, AttachError> {
    let environment = who.environment.ok_or(AttachError::NoEnvironment)?;
    crate::profile::validate_name(who.name.trim())?;
    let sale = target.open().await?;
    let checked = check_form(form, Some(&sale.db), Some(&sale.redis)).await?;
    if !checked.is_clean() {
        return Err(AttachError::Form(checked.problems));
    }
    let file = checked.form.to_file().map_err(AttachError::Form)?;
    let text = checked.form.to_file_text().map_err(AttachError::Form)?;
    let state_url = target.state_url()?;
    if let Some(url) = &state_url {
        // Before the file, the profile or a baseline is written: never the sale's own database.
        state::refuse_the_sales_own(url.expose_secret(), &file, Some(&sale.db)).await?;
    }
    let needs_baseline = file.needs_baseline();
    if needs_baseline {
        crate::action::may(who.role, false, Action::RecordBaselines)?;
        if reason.trim().is_empty() {
            return Err(AttachError::NoReason);
        }
        if state_url.is_none() {
            return Err(AdapterError::NoStateDb.into());
        }
    }
    let name = who.name.trim().to_string();
    let path = adapter_path(&to.profiles, &name);
    write_private(&path, &text)?;
    let profile = Profile {
        environment,
        mysql_url: target.mysql_url.trim().to_string(),
        mysql_replica_url: None,
        redis_url: target.redis_url.trim().to_string(),
        key_prefix: crate::keys::DEFAULT_PREFIX.to_string(),
        role: who.role,
        read_only: false,
        thresholds: Default::default(),
        adapter: Some(path.display().to_string()),
        state_url: blank_is_none(&target.state_url).map(str::to_string),
        tls: Default::default(),
        ssh_tunnel: None,
        secrets: Default::default(),
        passwords_from_env: Default::default(),
    };
    let passwords: Vec<(SecretSlot, SecretString)> = [
        (SecretSlot::Mysql, &target.mysql_password),
        (SecretSlot::Redis, &target.redis_password),
        (SecretSlot::State, &target.state_password),
    ]
    .into_iter()
    .filter_map(|(slot, pw)| blank_is_none(pw).map(|p| (slot, SecretString::from(p.to_string()))))
    .collect();
    let mut store = ProfileStore::load(&to.profiles)?;
    let (saved_name, secrets) = (name.clone(), to.secrets.clone());
    let saved =
        tokio::task::spawn_blocking(move || manage::save(&mut store, &*secrets, &saved_name, profile, &passwords))
            .await
            .expect("saving a profile does not panic")?;
    let mut baselines = Vec::new();
    if let Some(url) = state_url.filter(|_| needs_baseline) {
        let settings = target.settings(Some((who, environment)))?;
        let pool = state::open_beside(url.expose_secret(), &file, Some(&sale.db)).await?;
        let recorded = async {
            let readings = read(&file, &sale.links(), &HashMap::new(), &[]).await?;
            state::record_baselines(&pool, &settings, &file, &readings, reason).await
        }
        .await;
        pool.close().await;
        baselines = recorded?;
    }
    sale.close().await;
    Ok(Attached { profile: name, adapter: path.display().to_string(), baselines, passwords: saved })
}

/// Writes the adapter file readable by the user only (a RabbitMQ URL in it may hold a password).
fn write_private(path: &Path, text: &str) -> Result<(), AttachError> {
    let err = |source| AttachError::WriteFile { path: path.to_path_buf(), source };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(err)?;
    }
    let tmp = path.with_extension("toml.tmp");
    std::fs::write(&tmp, text).map_err(err)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600)).map_err(err)?;
    }
    std::fs::rename(&tmp, path).map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_typed_apart_joins_its_url_and_every_seed_of_a_cluster() {
        let url = with_password("Redis", "redis://a:1,redis://b:2", Some("p@ss")).unwrap();
        assert_eq!(url.expose_secret(), "redis://:p%40ss@a:1,redis://:p%40ss@b:2");
        let url = with_password("MySQL", "mysql://app@db:3306/sale", None).unwrap();
        assert_eq!(url.expose_secret(), "mysql://app@db:3306/sale");
    }

    #[test]
    fn the_adapter_file_lies_beside_the_profiles_file() {
        let path = adapter_path(Path::new("/home/a/.config/stockguard/profiles.toml"), "course");
        assert_eq!(path, Path::new("/home/a/.config/stockguard/course.adapter.toml"));
    }
}
