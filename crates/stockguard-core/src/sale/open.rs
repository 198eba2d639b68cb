//! Opening a sale, the one way both doors do it: the adapter file (a flag, its variable or the
//! profile's `adapter`) says which kind; a sale that keeps no database, or no Redis, is opened
//! with the URL of the server it uses alone.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{AdapterSale, OurSale, Sale};
use crate::adapter::{self, AdapterError, AdapterFile, OpenedSale};
use crate::connect::{connect_replica, ConnectError, Connections};
use crate::profile::resolve::{self, resolve_for_process, resolve_for_process_servers, Servers};
use crate::profile::{EnvOverrides, ProfileError, ProfileStore};

/// What to open.
#[derive(Debug, Clone, Default)]
pub struct OpenRequest<'a> {
    /// `--profile` (none: the environment, or the profiles file's default).
    pub profile: Option<&'a str>,
    /// The adapter file given by a flag or its variable; none: the profile's, if it names one.
    pub adapter: Option<&'a Path>,
    /// The state database of an adapter sale (a flag or its variable), before the profile's.
    pub state_url: Option<&'a str>,
    /// Open our own sale's read replica too (the window's ledger check reads it).
    pub replica: bool,
}

/// Why a sale could not be opened, naming the step.
#[derive(Debug, thiserror::Error)]
pub enum SaleError {
    #[error(transparent)]
    Profile(#[from] ProfileError),
    #[error(transparent)]
    Connect(#[from] ConnectError),
    #[error(transparent)]
    Adapter(#[from] AdapterError),
}

/// The adapter file a request names: its own, else the profile's `adapter` (none: our own sale).
pub fn adapter_file(given: Option<&Path>, profile: Option<&str>) -> Option<PathBuf> {
    given.map(Path::to_path_buf).or_else(|| {
        let store = ProfileStore::load_default().ok()?;
        let env = EnvOverrides::from_process_env();
        let (_, chosen) = resolve::chosen(&store, profile, &env).ok()??;
        chosen.adapter.as_ref().map(PathBuf::from)
    })
}

/// Opens the sale `request` names. The settings' notices (an overridden label, say) are in
/// [`Sale::settings`] for the door to print.
pub async fn open(request: &OpenRequest<'_>) -> Result<Sale, SaleError> {
    match adapter_file(request.adapter, request.profile) {
        Some(path) => open_adapter(&path, request).await,
        None => {
            let settings = resolve_for_process(request.profile).await?;
            let conns = Connections::open(settings).await?;
            let replica = if request.replica { connect_replica(&conns.settings).await? } else { None };
            Ok(Sale::Ours(Box::new(OurSale { conns, replica })))
        }
    }
}

async fn open_adapter(path: &Path, request: &OpenRequest<'_>) -> Result<Sale, SaleError> {
    let file = AdapterFile::load(path).map_err(AdapterError::from)?;
    // A sale that keeps no database, or no Redis, is read with the URL of the server it uses.
    let settings = match (adapter::open::needs_db(&file), file.redis.is_some()) {
        (true, true) => resolve_for_process(request.profile).await?,
        (false, _) => resolve_for_process_servers(request.profile, Servers::RedisOnly).await?,
        (true, false) => resolve_for_process_servers(request.profile, Servers::MysqlOnly).await?,
    };
    let sale = OpenedSale::connect(file, &settings, request.state_url).await?;
    Ok(Sale::Adapter(Box::new(AdapterSale { sale: Arc::new(sale), settings })))
}
