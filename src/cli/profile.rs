//! `stockguard profile list|show|add|remove|set-password`.

use std::io::IsTerminal as _;

use clap::{Args, Subcommand};
use secrecy::SecretString;

use super::choice::one_of;
use super::output::say;
use super::{output, CliError};
use stockguard_core::alerts::Thresholds;
use stockguard_core::profile::manage::{self, EnvPassword, SavedPasswords};
use stockguard_core::profile::{
    CertFiles, EnvironmentKind, KeychainStore, MysqlTls, Profile, ProfileStore, Role, SecretSlot, SecretStore as _,
    SshTunnel, SslMode, Tls,
};

#[derive(Debug, Subcommand)]
pub enum ProfileCommand {
    /// List saved profiles.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Show a profile, its TLS files, and what a connection with it uses (TLS mode, cipher).
    Show {
        name: String,
        /// Only the saved fields: do not connect.
        #[arg(long)]
        no_connect: bool,
        #[arg(long)]
        json: bool,
    },
    /// Add or replace a profile (URLs without passwords; see `set-password`).
    Add(Box<AddArgs>),
    /// Remove a profile and its keychain entries.
    Remove { name: String },
    /// Store a password in the OS keychain, read from standard input.
    SetPassword {
        name: String,
        #[arg(long, value_parser = one_of(&SecretSlot::ALL, SecretSlot::as_str), default_value = "mysql")]
        slot: SecretSlot,
    },
}

#[derive(Debug, Args)]
pub struct AddArgs {
    name: String,
    #[arg(long, value_parser = one_of(&EnvironmentKind::ALL, EnvironmentKind::as_str))]
    environment: EnvironmentKind,
    #[arg(long)]
    mysql_url: String,
    #[arg(long)]
    replica_url: Option<String>,
    #[arg(long)]
    redis_url: String,
    #[arg(long, default_value = "sg")]
    key_prefix: String,
    #[arg(long, value_parser = one_of(&Role::ALL, Role::as_str), default_value = "oncall")]
    role: Role,
    #[arg(long)]
    read_only: bool,
    /// Alert when more reservation messages than this wait to be persisted.
    #[arg(long, default_value_t = Thresholds::default().backlog_messages)]
    alert_backlog: i64,
    /// Alert when at least this many live engines have their Redis breaker open.
    #[arg(long, default_value_t = Thresholds::default().breakers_open)]
    alert_breakers: usize,
    /// The adapter file of a sale Stockguard did not build (kept as an absolute path); the
    /// profile's MySQL and Redis URLs are then that sale's.
    #[arg(long)]
    adapter: Option<std::path::PathBuf>,
    /// Stockguard's own database for that sale (no password: `set-password --slot state`).
    #[arg(long)]
    state_url: Option<String>,
    /// The CA (PEM) a `rediss://` server's certificate must chain to; the only one trusted.
    #[arg(long)]
    redis_ca: Option<std::path::PathBuf>,
    /// A client certificate (PEM) for a Redis that asks for one; with --redis-key.
    #[arg(long)]
    redis_cert: Option<std::path::PathBuf>,
    #[arg(long)]
    redis_key: Option<std::path::PathBuf>,
    /// MySQL's ssl-mode; VERIFY_IDENTITY when --mysql-ca is given, else PREFERRED.
    #[arg(long, value_parser = one_of(&SslMode::ALL, SslMode::as_str))]
    mysql_ssl_mode: Option<SslMode>,
    /// The CA (PEM) MySQL's certificate must chain to (VERIFY_CA, VERIFY_IDENTITY).
    #[arg(long)]
    mysql_ca: Option<std::path::PathBuf>,
    /// A client certificate (PEM) for MySQL; with --mysql-key.
    #[arg(long)]
    mysql_cert: Option<std::path::PathBuf>,
    #[arg(long)]
    mysql_key: Option<std::path::PathBuf>,
    /// Read this password (mysql, mysql_replica, redis, state) from its environment variable
    /// (STOCKGUARD_MYSQL_PASSWORD...) at each run instead of the keychain; repeat or separate
    /// by commas. Without a keychain, every slot whose variable is set now is recorded so.
    #[arg(long, value_delimiter = ',', value_parser = one_of(&SecretSlot::ALL, SecretSlot::as_str))]
    password_from_env: Vec<SecretSlot>,
    /// Reach MySQL and Redis through this SSH bastion, `ssh://user@host:port`; with --ssh-key.
    #[arg(long, requires = "ssh_key")]
    ssh_tunnel: Option<String>,
    /// The OpenSSH private key for the bastion (its passphrase, if any, from
    /// STOCKGUARD_SSH_KEY_PASSPHRASE at each run).
    #[arg(long, requires = "ssh_tunnel")]
    ssh_key: Option<std::path::PathBuf>,
    /// The known_hosts file holding the bastion's host key (default ~/.ssh/known_hosts).
    #[arg(long, requires = "ssh_tunnel")]
    ssh_known_hosts: Option<std::path::PathBuf>,
}

impl AddArgs {
    fn thresholds(&self) -> Thresholds {
        Thresholds { backlog_messages: self.alert_backlog, breakers_open: self.alert_breakers }
    }

    /// The adapter file as an absolute path, so the profile reads it from any directory.
    fn adapter(&self) -> Result<Option<String>, CliError> {
        absolute("--adapter", self.adapter.as_deref())
    }

    /// The TLS files, as absolute paths (each must exist).
    fn tls(&self) -> Result<Tls, CliError> {
        Ok(Tls {
            redis: cert_files("--redis", [&self.redis_ca, &self.redis_cert, &self.redis_key])?,
            mysql: MysqlTls {
                ssl_mode: self.mysql_ssl_mode,
                files: cert_files("--mysql", [&self.mysql_ca, &self.mysql_cert, &self.mysql_key])?,
            },
        })
    }

    /// The SSH bastion, its files as absolute paths (each must exist).
    fn ssh_tunnel(&self) -> Result<Option<SshTunnel>, CliError> {
        let Some(url) = &self.ssh_tunnel else { return Ok(None) };
        let tunnel = SshTunnel {
            url: url.clone(),
            key: absolute("--ssh-key", self.ssh_key.as_deref())?.unwrap_or_default(),
            known_hosts: absolute("--ssh-known-hosts", self.ssh_known_hosts.as_deref())?,
        };
        tunnel.validate()?;
        Ok(Some(tunnel))
    }
}

/// The CA, certificate and key given by `{flag}-ca`, `{flag}-cert` and `{flag}-key`.
fn cert_files(flag: &str, [ca, cert, key]: [&Option<std::path::PathBuf>; 3]) -> Result<CertFiles, CliError> {
    Ok(CertFiles {
        ca: absolute(&format!("{flag}-ca"), ca.as_deref())?,
        cert: absolute(&format!("{flag}-cert"), cert.as_deref())?,
        key: absolute(&format!("{flag}-key"), key.as_deref())?,
    })
}

/// A file named by `flag` as an absolute path, so the profile reads it from any directory.
fn absolute(flag: &str, path: Option<&std::path::Path>) -> Result<Option<String>, CliError> {
    let Some(path) = path else { return Ok(None) };
    let absolute = std::fs::canonicalize(path)
        .map_err(|e| CliError::Refused(format!("{flag} {}: {e}; nothing was saved", path.display())))?;
    Ok(Some(absolute.to_string_lossy().into_owned()))
}

/// `profile show`: the saved fields, then (unless `no_connect`) what a connection uses.
async fn show(store: &ProfileStore, name: &str, no_connect: bool, json: bool) -> Result<(), CliError> {
    let profile = store.get(name)?.clone();
    let probe = if no_connect {
        None
    } else {
        Some(stockguard_core::connect::probe(stockguard_core::profile::resolve_for_process(Some(name)).await?).await?)
    };
    if json {
        output::json(&serde_json::json!({ "name": name, "profile": profile, "connection": probe }));
        return Ok(());
    }
    say!(
        "profile      {name} ({}, {}{})",
        profile.environment,
        profile.role,
        if profile.read_only { ", read-only" } else { "" }
    );
    say!("mysql        {}", profile.mysql_url);
    if let Some(replica) = &profile.mysql_replica_url {
        say!("replica      {replica}");
    }
    say!("redis        {}", profile.redis_url);
    say!("key prefix   {}", profile.key_prefix);
    let m = &profile.tls.mysql;
    say!("mysql tls    ssl-mode {}{}{}", m.mode(), file(" ca=", &m.files.ca), file(" cert=", &m.files.cert));
    let r = &profile.tls.redis;
    say!(
        "redis tls    {}{}{}",
        if profile.redis_url.contains("rediss://") { "rediss" } else { "none (redis://)" },
        file(" ca=", &r.ca),
        file(" cert=", &r.cert)
    );
    if let Some(ssh) = &profile.ssh_tunnel {
        let known_hosts = ssh.known_hosts.as_deref().map_or("~/.ssh/known_hosts".into(), String::from);
        say!("ssh tunnel   {} key={} known_hosts={known_hosts}", ssh.url, ssh.key);
    }
    if let Some(probe) = probe {
        say!("connected    {}", probe.transport_line);
    }
    Ok(())
}

fn file(label: &str, path: &Option<String>) -> String {
    path.as_ref().map_or(String::new(), |p| format!("{label}{p}"))
}

/// Says which passwords of `name` its environment variables give, and why (no keychain here,
/// or asked for).
fn say_passwords(name: &str, saved: &SavedPasswords) {
    if let Some(reason) = &saved.no_keychain {
        say!("no OS keychain here ({reason}): no password is stored for `{name}`");
    }
    for EnvPassword { slot, env_var } in &saved.from_env {
        say!("the {slot} password of `{name}` is read from {env_var} at each run");
    }
    if saved.no_keychain.is_some() {
        say!("(another password: `stockguard profile set-password {name} --slot SLOT` records it the same way)");
    }
}

pub async fn run(cmd: ProfileCommand) -> Result<(), CliError> {
    let mut store = ProfileStore::load_default()?;
    match cmd {
        ProfileCommand::List { json } => {
            if json {
                let all: std::collections::BTreeMap<&str, &Profile> = store.iter().collect();
                output::json(&all);
            } else if store.names().next().is_none() {
                say!(
                    "no profiles in {} (run `stockguard sandbox up` or `stockguard profile add`)",
                    store.path().display()
                );
            } else {
                for (name, p) in store.iter() {
                    let adapter = p.adapter.as_ref().map_or(String::new(), |a| format!("  adapter={a}"));
                    say!(
                        "{name:<16} {:<10} {:<11} {}{}  {}  prefix={}{adapter}",
                        p.environment,
                        p.role,
                        if p.read_only { "read-only " } else { "" },
                        p.mysql_url,
                        p.redis_url,
                        p.key_prefix
                    );
                }
            }
            Ok(())
        }
        ProfileCommand::Show { name, no_connect, json } => show(&store, &name, no_connect, json).await,
        ProfileCommand::Add(a) => {
            let a = *a;
            let thresholds = a.thresholds();
            let adapter = a.adapter()?;
            let tls = a.tls()?;
            let ssh_tunnel = a.ssh_tunnel()?;
            let name = a.name.clone();
            let profile = Profile {
                environment: a.environment,
                mysql_url: a.mysql_url,
                mysql_replica_url: a.replica_url,
                redis_url: a.redis_url,
                key_prefix: a.key_prefix,
                role: a.role,
                read_only: a.read_only,
                thresholds,
                adapter,
                state_url: a.state_url,
                tls,
                ssh_tunnel,
                secrets: Default::default(),
                passwords_from_env: a.password_from_env.into_iter().collect(),
            };
            let path = store.path().display().to_string();
            let saved =
                tokio::task::spawn_blocking(move || manage::save(&mut store, &KeychainStore, &name, profile, &[]))
                    .await
                    .expect("saving a profile does not panic")?;
            say!("profile `{}` saved to {path}", a.name);
            say_passwords(&a.name, &saved);
            Ok(())
        }
        ProfileCommand::Remove { name } => {
            let removed = store.remove(&name).ok_or_else(|| CliError::Refused(format!("no profile `{name}`")))?;
            store.save()?;
            let slots: Vec<SecretSlot> = removed.secrets.into_iter().collect();
            let name2 = name.clone();
            tokio::task::spawn_blocking(move || {
                for slot in slots {
                    if let Err(lookup) = KeychainStore.delete(&name2, slot) {
                        eprintln!("note: keychain entry {name2}:{slot} not removed: {lookup:?}");
                    }
                }
            })
            .await
            .expect("keychain clean-up does not panic");
            say!("profile `{name}` removed");
            Ok(())
        }
        ProfileCommand::SetPassword { name, slot } => {
            let mut profile = store.get(&name)?.clone();
            if !profile.slots().contains(&slot) {
                return Err(CliError::Refused(format!("profile `{name}` has no {slot} server; nothing was stored")));
            }
            // Without a keychain nothing is asked: the profile records that the variable gives it.
            let reachable = tokio::task::spawn_blocking(|| KeychainStore.reachable())
                .await
                .expect("asking for the keychain does not panic");
            let mut passwords = Vec::new();
            if reachable.is_ok() {
                let password = if std::io::stdin().is_terminal() {
                    rpassword::prompt_password(format!("{slot} password for `{name}`: ")).map_err(CliError::Stdin)?
                } else {
                    let mut line = String::new();
                    std::io::stdin().read_line(&mut line).map_err(CliError::Stdin)?;
                    line.trim_end_matches(['\r', '\n']).to_string()
                };
                profile.passwords_from_env.remove(&slot);
                passwords.push((slot, SecretString::from(password)));
            } else {
                profile.passwords_from_env.insert(slot);
            }
            let name2 = name.clone();
            let saved = tokio::task::spawn_blocking(move || {
                manage::save(&mut store, &KeychainStore, &name2, profile, &passwords)
            })
            .await
            .expect("keychain write does not panic")?;
            if saved.no_keychain.is_none() {
                say!("{slot} password of `{name}` stored in the OS keychain");
            }
            say_passwords(&name, &saved);
            Ok(())
        }
    }
}
