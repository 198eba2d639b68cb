//! The Connections screen: saved profiles, created, edited, tested and deleted. Passwords
//! come in with a save and go to the keychain (on a machine without one, the profile records
//! that their environment variables give them); they are never sent back.

use secrecy::SecretString;
use serde::{Deserialize, Serialize};
use stockguard_core::alerts::Thresholds;
use stockguard_core::connect::{probe, Probe};
use stockguard_core::profile::manage::{self, NamedProfile, SavedPasswords};
use stockguard_core::profile::{resolve_for_process, EnvironmentKind, Profile, Role, SecretSlot, Tls};

use crate::error::{DesktopError, MessageCode, Said};

/// A profile as the form sends it. Empty passwords leave the stored ones as they are. A new
/// profile has no environment until the person chooses one (`None`): a default would be a
/// guess, and guessing sandbox would take away production's confirmations.
#[derive(Debug, Deserialize, ts_rs::TS)]
pub struct ProfileForm {
    pub name: String,
    pub environment: Option<EnvironmentKind>,
    pub mysql_url: String,
    pub mysql_replica_url: Option<String>,
    pub redis_url: String,
    pub key_prefix: String,
    pub role: Role,
    pub read_only: bool,
    pub thresholds: Thresholds,
    pub mysql_password: Option<String>,
    pub mysql_replica_password: Option<String>,
    pub redis_password: Option<String>,
    /// The TLS files and MySQL's mode, as the CLI's `--redis-ca`.. flags take them.
    #[serde(default)]
    pub tls: Tls,
}

/// The passwords typed into the form, by the keychain slot each goes to.
type Passwords = Vec<(SecretSlot, SecretString)>;

impl ProfileForm {
    fn split(self) -> Result<(String, Profile, Passwords), DesktopError> {
        let Some(environment) = self.environment else {
            let said = Said::new(
                MessageCode::ChooseEnvironment,
                &[],
                "choose the profile's environment (production, staging or sandbox)",
            );
            return Err(DesktopError::Invalid(said));
        };
        let blank_is_none = |s: Option<String>| s.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
        let passwords = [
            (SecretSlot::Mysql, self.mysql_password),
            (SecretSlot::MysqlReplica, self.mysql_replica_password),
            (SecretSlot::Redis, self.redis_password),
        ]
        .into_iter()
        .filter_map(|(slot, pw)| pw.filter(|p| !p.is_empty()).map(|p| (slot, SecretString::from(p))))
        .collect();
        let profile = Profile {
            environment,
            mysql_url: self.mysql_url.trim().to_string(),
            mysql_replica_url: blank_is_none(self.mysql_replica_url),
            redis_url: self.redis_url.trim().to_string(),
            key_prefix: self.key_prefix.trim().to_string(),
            role: self.role,
            read_only: self.read_only,
            thresholds: self.thresholds,
            adapter: None,
            state_url: None,
            tls: self.tls,
            ssh_tunnel: None,
            secrets: Default::default(),
            passwords_from_env: Default::default(),
        };
        Ok((self.name.trim().to_string(), profile, passwords))
    }
}

#[tauri::command(rename_all = "snake_case")]
pub async fn list_profiles() -> Result<Vec<NamedProfile>, DesktopError> {
    Ok(manage::list_default()?)
}

/// What a save leaves: every profile, and where the saved one's passwords come from (on a
/// machine without a keychain, the environment variables the window names).
#[derive(Debug, Serialize, ts_rs::TS)]
pub struct ProfileSaved {
    pub profiles: Vec<NamedProfile>,
    pub passwords: SavedPasswords,
}

#[tauri::command(rename_all = "snake_case")]
pub async fn save_profile(form: ProfileForm) -> Result<ProfileSaved, DesktopError> {
    let (name, mut profile, passwords) = form.split()?;
    // The form does not edit a profile's adapter file, state database and SSH bastion (the
    // CLI does): saving it keeps them.
    if let Some(old) = manage::list_default()?.into_iter().find(|p| p.name == name) {
        profile.adapter = old.profile.adapter;
        profile.state_url = old.profile.state_url;
        profile.ssh_tunnel = old.profile.ssh_tunnel;
    }
    let passwords = manage::save_default(name, profile, passwords).await?;
    Ok(ProfileSaved { profiles: manage::list_default()?, passwords })
}

/// Returns notices about keychain entries that could not be removed.
#[tauri::command(rename_all = "snake_case")]
pub async fn delete_profile(name: String) -> Result<Vec<String>, DesktopError> {
    Ok(manage::delete_default(name).await?)
}

/// Connects with a saved profile and times one round trip to each server.
#[tauri::command(rename_all = "snake_case")]
pub async fn test_profile(name: String) -> Result<Probe, DesktopError> {
    Ok(probe(resolve_for_process(Some(&name)).await?).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form() -> ProfileForm {
        ProfileForm {
            name: " prod-eu ".into(),
            environment: Some(EnvironmentKind::Production),
            mysql_url: "mysql://app@db:3306/sale ".into(),
            mysql_replica_url: Some("  ".into()),
            redis_url: "redis://cache:6379/".into(),
            key_prefix: "sg".into(),
            role: Role::Oncall,
            read_only: true,
            thresholds: Default::default(),
            mysql_password: Some("s3cret".into()),
            mysql_replica_password: Some(String::new()),
            redis_password: None,
            tls: Default::default(),
        }
    }

    #[test]
    fn a_blank_replica_is_no_replica_and_blank_passwords_keep_the_stored_ones() {
        let (name, profile, passwords) = form().split().unwrap();
        assert_eq!(name, "prod-eu");
        assert_eq!(profile.mysql_url, "mysql://app@db:3306/sale");
        assert_eq!(profile.mysql_replica_url, None);
        let slots: Vec<SecretSlot> = passwords.iter().map(|(slot, _)| *slot).collect();
        assert_eq!(slots, vec![SecretSlot::Mysql], "only the password typed is sent to the keychain");
    }

    #[test]
    fn the_forms_tls_files_and_mode_go_into_the_profile() {
        let tls = Tls {
            redis: stockguard_core::profile::CertFiles {
                ca: Some("/etc/sg/redis-ca.pem".into()),
                ..Default::default()
            },
            mysql: stockguard_core::profile::MysqlTls {
                ssl_mode: Some(stockguard_core::profile::SslMode::VerifyCa),
                files: stockguard_core::profile::CertFiles { ca: Some("/etc/sg/ca.pem".into()), ..Default::default() },
            },
        };
        let (_, profile, _) = ProfileForm { tls: tls.clone(), ..form() }.split().unwrap();
        assert_eq!(profile.tls, tls);
    }

    #[test]
    fn a_profile_with_no_environment_chosen_is_refused_saying_so() {
        let refused = ProfileForm { environment: None, ..form() }.split().unwrap_err();
        assert!(
            matches!(&refused, DesktopError::Invalid(said) if said.code == MessageCode::ChooseEnvironment),
            "{refused}"
        );
    }
}
