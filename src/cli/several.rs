//! What a command acting on several products at once (`rewrite`, and its repair over an
//! adapter) does the same way: each product id typed again on production, and one error per
//! product that failed.

use std::io::IsTerminal as _;

use super::CliError;
use stockguard_core::profile::EnvironmentKind;
use stockguard_core::ProductId;

/// The product ids confirmed: those given with `--confirm`, and on production, when a person
/// is at a terminal, each other one typed again. The core refuses a production write of a
/// product not among them.
pub(super) fn typed_again<P: Clone + PartialEq + std::fmt::Display>(
    environment: EnvironmentKind,
    dry_run: bool,
    products: &[P],
    given: &[P],
) -> Result<Vec<P>, CliError> {
    let mut confirmed = given.to_vec();
    if environment == EnvironmentKind::Production && !dry_run && std::io::stdin().is_terminal() {
        let unconfirmed: Vec<P> = products.iter().filter(|p| !confirmed.contains(p)).cloned().collect();
        for p in unconfirmed {
            eprint!("PRODUCTION: type the product id {p} to rewrite its Redis stock: ");
            let mut line = String::new();
            std::io::stdin().read_line(&mut line).map_err(CliError::Stdin)?;
            if line.trim() == p.to_string() {
                confirmed.push(p);
            }
        }
    }
    Ok(confirmed)
}

/// Product ids as typed, as our own sale's: its ids are numbers, so text names none of its
/// products (refused in one line, before anything is read).
pub(super) fn of_our_sale(ids: &[ProductId]) -> Result<Vec<u64>, CliError> {
    ids.iter()
        .map(|id| {
            id.as_num().ok_or_else(|| {
                CliError::Refused(format!(
                    "no product {id} in this sale: our own sale's product ids are numbers (text ids are a sale's \
                     read through its adapter file)"
                ))
            })
        })
        .collect()
}

/// One product's error is the command's, printed once (by `main`). Several: each failure with
/// its product, then a summary.
pub(super) fn failures<P: std::fmt::Display, E: std::error::Error + 'static>(
    mut errors: Vec<(P, E)>,
    total: usize,
) -> Result<(), CliError>
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
