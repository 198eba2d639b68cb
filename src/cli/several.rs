//! What a command acting on several products at once (`rewrite`, and its repair over an
//! adapter) does the same way: each product id typed again on production, and one error per
//! product that failed.

use std::io::IsTerminal as _;

use super::CliError;
use stockguard_core::profile::EnvironmentKind;

/// The product ids confirmed: those given with `--confirm`, and on production, when a person
/// is at a terminal, each other one typed again. The core refuses a production write of a
/// product not among them.
pub(super) fn typed_again(
    environment: EnvironmentKind,
    dry_run: bool,
    products: &[u64],
    given: &[u64],
) -> Result<Vec<u64>, CliError> {
    let mut confirmed = given.to_vec();
    if environment == EnvironmentKind::Production && !dry_run && std::io::stdin().is_terminal() {
        let unconfirmed: Vec<u64> = products.iter().copied().filter(|p| !confirmed.contains(p)).collect();
        for p in &unconfirmed {
            eprint!("PRODUCTION: type the product id {p} to rewrite its Redis stock: ");
            let mut line = String::new();
            std::io::stdin().read_line(&mut line).map_err(CliError::Stdin)?;
            if line.trim() == p.to_string() {
                confirmed.push(*p);
            }
        }
    }
    Ok(confirmed)
}

/// One product's error is the command's, printed once (by `main`). Several: each failure with
/// its product, then a summary.
pub(super) fn failures<E: std::error::Error + 'static>(mut errors: Vec<(u64, E)>, total: usize) -> Result<(), CliError>
where
    CliError: From<E>,
{
    match errors.len() {
        0 => Ok(()),
        1 if total == 1 => Err(errors.remove(0).1.into()),
        failed => {
            for (p, e) in &errors {
                eprintln!("error: product {p}: {}", stockguard_core::step::chain(e));
            }
            Err(CliError::RewritesFailed { failed, total })
        }
    }
}
