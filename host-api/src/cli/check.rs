//! `pisa-vk check FILE...`: checks each module, then links them into one program.

use super::{invalid, read_sources, Failure};

/// Arguments of `check`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// PISA files of one program (`-` for standard input, once).
    #[arg(required = true)]
    files: Vec<String>,
}

/// Validates every file and then the link of them all; every diagnostic is printed; exit 1
/// if a file is invalid or the files do not link.
pub fn run(a: Args) -> Result<(), Failure> {
    let files = read_sources(&a.files)?;
    pisa_translator::link(&files).map(drop).map_err(invalid)
}
