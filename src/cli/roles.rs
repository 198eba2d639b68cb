//! `stockguard roles plan|apply|show`: roles the servers enforce.

use std::path::PathBuf;

use clap::Subcommand;
use secrecy::ExposeSecret as _;

use super::output::say;
use super::{connect, output, CliError};
use stockguard_core::roles::{self, Account, Right, RolesSpec, Target};

#[derive(Debug, Subcommand)]
pub enum RolesCommand {
    /// The statements a roles file asks for (passwords masked); changes nothing.
    Plan {
        /// The roles file (see `stockguard roles --help`).
        #[arg(long)]
        file: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Create the roles and accounts of a roles file on the sale's MySQL and Redis, with an
    /// admin connection. Running it again changes nothing.
    Apply {
        #[arg(long)]
        file: PathBuf,
        /// Required: this creates accounts and changes grants.
        #[arg(long)]
        confirm: bool,
        /// Why: goes to the audit log.
        #[arg(long, default_value = "roles file applied")]
        reason: String,
    },
    /// What the current connection's MySQL account and Redis user may do, read from the
    /// servers.
    Show {
        #[arg(long)]
        json: bool,
    },
}

fn account(a: &Account) -> String {
    match a {
        Account::Mysql { user, host } => format!("MySQL {user}@{host}"),
        Account::Redis { user } => format!("Redis {user}"),
    }
}

fn right(name: &str, r: &Right) {
    let verdict = match r.allowed {
        Some(true) => "yes",
        Some(false) => "no",
        None => "unknown",
    };
    let reasons: Vec<String> = r.reasons.iter().map(ToString::to_string).collect();
    say!("{name:<22} {verdict:<8} {}", reasons.join("; "));
}

pub async fn run(cmd: RolesCommand, profile: Option<&str>) -> Result<(), CliError> {
    let conns = connect(profile).await?;
    let env = |var: &str| std::env::var(var).ok();
    match cmd {
        RolesCommand::Plan { file, json } => {
            let plan = roles::plan(&RolesSpec::load(&file)?, &Target::of(&conns).await?, &env)?;
            if json {
                output::json(&plan);
                return Ok(());
            }
            say!(
                "-- database {} on {}, Redis keys {}:*",
                plan.target.database,
                plan.target.flavour.as_str(),
                plan.target.key_prefix
            );
            for s in &plan.statements {
                let when = match s.when {
                    roles::When::Always => "",
                    roles::When::AccountIsNew => "  -- only if the account is new",
                    roles::When::AccountExists => "  -- only if the account exists",
                };
                say!("{}{when}", s.text);
            }
            Ok(())
        }
        RolesCommand::Apply { file, confirm, reason } => {
            let plan = roles::plan(&RolesSpec::load(&file)?, &Target::of(&conns).await?, &env)?;
            if !confirm {
                return Err(CliError::Refused(format!(
                    "`roles apply` creates accounts and changes grants on the {} sale at {}; run it again with --confirm",
                    conns.settings.environment,
                    conns.settings.mysql_display()
                )));
            }
            let applied = roles::apply(&plan, &conns, &reason).await?;
            for text in &applied.ran {
                say!("{text}");
            }
            say!(
                "{} statements run, {} skipped (generated passwords of existing accounts); audit {}",
                applied.ran.len(),
                applied.skipped,
                applied.audit_id
            );
            for a in &applied.created {
                say!("created {}", account(a));
            }
            for p in &applied.new_passwords {
                let accounts: Vec<String> = p.accounts.iter().map(account).collect();
                say!("password of {} ({}), shown once: {}", p.person, accounts.join(", "), p.password.expose_secret());
            }
            Ok(())
        }
        RolesCommand::Show { json } => {
            let rights = roles::effective_rights(&conns).await?;
            if json {
                output::json(&rights);
                return Ok(());
            }
            say!(
                "MySQL account {} on {}; Redis user {}",
                rights.mysql_account,
                rights.database,
                rights.redis_user.as_deref().unwrap_or("(cannot tell)")
            );
            right("read", &rights.read);
            right("rewrite", &rights.rewrite);
            right("degrade", &rights.degrade);
            right("approve compensation", &rights.approve_compensation);
            right("execute compensation", &rights.execute_compensation);
            right("run drills", &rights.run_drills);
            right("acknowledge alerts", &rights.acknowledge_alerts);
            Ok(())
        }
    }
}
