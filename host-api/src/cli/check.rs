//! `pisa-vk check FILE...`: checks each module, links them into one program and translates
//! it (with the default options), so that `check` refuses everything `translate` refuses
//! (control flow nested past SPIR-V's limit, say).

use super::{invalid, read_sources, Failure};

/// Arguments of `check`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// PISA files of one program (`-` for standard input, once).
    #[arg(required = true)]
    files: Vec<String>,
}

/// Validates every file, the link of them all and its translation; every diagnostic is
/// printed; exit 1 if a file is invalid, the files do not link or the program does not
/// translate.
pub fn run(a: Args) -> Result<(), Failure> {
    let files = read_sources(&a.files)?;
    pisa_translator::link(&files).map_err(invalid)?;
    let options = pisa_translator::Options::default();
    pisa_translator::compile_linked(&files, &options)
        .map(drop)
        .map_err(invalid)
}
