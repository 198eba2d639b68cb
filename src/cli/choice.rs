//! Command-line choices among the core's enums.
//!
//! The core knows nothing of clap (its enums do not derive `clap::ValueEnum`), so the CLI
//! builds their parsers here from what the core does know: every value (`ALL`) and its name
//! (`as_str`, the same name the profiles file and the JSON output use).

use clap::builder::{PossibleValuesParser, TypedValueParser};

/// A parser that accepts exactly the names of `all` and gives back the value named; `--help`
/// and a wrong value list the names.
pub fn one_of<T>(all: &'static [T], name: fn(T) -> &'static str) -> impl TypedValueParser<Value = T>
where
    T: Copy + Send + Sync + 'static,
{
    PossibleValuesParser::new(all.iter().map(|value| name(*value))).map(move |chosen| {
        *all.iter()
            .find(|value| name(**value) == chosen)
            .expect("PossibleValuesParser accepts only the names it was given")
    })
}
