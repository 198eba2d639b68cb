//! The profiles file: `<config dir>/stockguard/profiles.toml` (or `$STOCKGUARD_CONFIG_DIR`).
//!
//! ```toml
//! [profiles.sandbox]
//! environment = "sandbox"
//! mysql_url = "mysql://root@127.0.0.1:3306/stockguard"
//! redis_url = "redis://127.0.0.1:6379/"
//! key_prefix = "sg"
//! role = "oncall"
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{validate_name, Profile, ProfileError};

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
struct ProfilesFile {
    #[serde(default)]
    profiles: BTreeMap<String, Profile>,
}

/// The saved profiles, loaded from and saved to one file.
#[derive(Debug, Clone)]
pub struct ProfileStore {
    path: PathBuf,
    file: ProfilesFile,
}

impl ProfileStore {
    /// The default location: `$STOCKGUARD_CONFIG_DIR/profiles.toml`, else the user's config dir.
    pub fn default_path() -> Result<PathBuf, ProfileError> {
        if let Some(dir) = std::env::var_os("STOCKGUARD_CONFIG_DIR") {
            return Ok(PathBuf::from(dir).join("profiles.toml"));
        }
        dirs::config_dir().map(|d| d.join("stockguard").join("profiles.toml")).ok_or(ProfileError::NoConfigDir)
    }

    /// Loads the default file (an absent file is an empty store).
    pub fn load_default() -> Result<Self, ProfileError> {
        Self::load(&Self::default_path()?)
    }

    pub fn load(path: &Path) -> Result<Self, ProfileError> {
        let display = path.display().to_string();
        let file = match std::fs::read_to_string(path) {
            Ok(text) => toml::from_str(&text)
                .map_err(|e| ProfileError::Parse { path: display, reason: e.message().to_string() })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => ProfilesFile::default(),
            Err(source) => return Err(ProfileError::Read { path: display, source }),
        };
        Ok(Self { path: path.to_path_buf(), file })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn get(&self, name: &str) -> Result<&Profile, ProfileError> {
        self.file.profiles.get(name).ok_or_else(|| ProfileError::UnknownProfile {
            name: name.to_string(),
            known: if self.file.profiles.is_empty() {
                "none".to_string()
            } else {
                self.names().collect::<Vec<_>>().join(", ")
            },
        })
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.file.profiles.keys().map(String::as_str)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &Profile)> {
        self.file.profiles.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Adds or replaces a profile after validating it. Call [`save`](Self::save) to persist.
    pub fn upsert(&mut self, name: &str, profile: Profile) -> Result<(), ProfileError> {
        validate_name(name)?;
        profile.validate()?;
        self.file.profiles.insert(name.to_string(), profile);
        Ok(())
    }

    /// Removes a profile; returns it if it existed.
    pub fn remove(&mut self, name: &str) -> Option<Profile> {
        self.file.profiles.remove(name)
    }

    /// Writes the file atomically (temp file + rename), readable by the user only.
    pub fn save(&self) -> Result<(), ProfileError> {
        let display = self.path.display().to_string();
        let write_err = |source| ProfileError::Write { path: display.clone(), source };
        let text = toml::to_string_pretty(&self.file).expect("profiles serialize to TOML");
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(write_err)?;
        }
        let tmp = self.path.with_extension("toml.tmp");
        std::fs::write(&tmp, text).map_err(write_err)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600)).map_err(write_err)?;
        }
        std::fs::rename(&tmp, &self.path).map_err(write_err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{EnvironmentKind, Role};

    fn sample() -> Profile {
        Profile {
            environment: EnvironmentKind::Staging,
            mysql_url: "mysql://app@db:3306/sale".into(),
            mysql_replica_url: None,
            redis_url: "redis://cache:6379/".into(),
            key_prefix: "sg".into(),
            role: Role::Oncall,
            read_only: false,
            thresholds: Default::default(),
            adapter: None,
            state_url: None,
            tls: Default::default(),
            ssh_tunnel: None,
            secrets: Default::default(),
            passwords_from_env: Default::default(),
        }
    }

    #[test]
    fn profiles_survive_a_save_and_load() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("profiles.toml");
        let mut store = ProfileStore::load(&path).unwrap();
        store.upsert("staging-eu", sample()).unwrap();
        store.save().unwrap();
        let again = ProfileStore::load(&path).unwrap();
        assert_eq!(again.get("staging-eu").unwrap(), &sample());
    }

    #[test]
    fn an_unknown_profile_names_the_known_ones() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = ProfileStore::load(&dir.path().join("p.toml")).unwrap();
        store.upsert("a", sample()).unwrap();
        let err = store.get("b").unwrap_err().to_string();
        assert!(err.contains("unknown profile `b`") && err.contains("known: a"), "{err}");
    }

    #[test]
    fn a_profile_with_a_password_in_its_url_is_not_saved() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = ProfileStore::load(&dir.path().join("p.toml")).unwrap();
        let mut p = sample();
        p.redis_url = "redis://:pw@cache:6379/".into();
        assert!(matches!(store.upsert("x", p), Err(ProfileError::PasswordInUrl { .. })));
    }
}
