//! `pisa-vk check FILE...`

use super::{read_source, Failure};

/// Arguments of `check`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// PISA files (`-` for standard input).
    #[arg(required = true)]
    files: Vec<String>,
}

/// Validates every file; all diagnostics are printed; exit 1 if any file is invalid.
pub fn run(a: Args) -> Result<(), Failure> {
    let mut out = String::new();
    for f in &a.files {
        let file = read_source(f)?;
        if let Err(d) = pisa_translator::check(&file) {
            out.push_str(&d.render());
        }
    }
    if out.is_empty() {
        Ok(())
    } else {
        Err(Failure {
            code: 1,
            message: out,
        })
    }
}
