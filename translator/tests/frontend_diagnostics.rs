//! Golden test of the rendered diagnostics: `file:line:col: error: message`, the source line and
//! a caret under the offending text, for a file with several errors, all of which are reported.
//! Refresh the golden file with `BLESS=1`.

use pisa_translator::{check, SourceFile};
use std::path::Path;
use std::sync::Arc;

#[test]
fn several_errors_render_with_position_line_and_caret() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/diagnostics");
    let text = std::fs::read_to_string(dir.join("several.pisa")).unwrap();
    let file = Arc::new(SourceFile::new("several.pisa", text));
    let rendered = check(&file).expect_err("the file has errors").render();
    let golden = dir.join("several.stderr");
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&golden, &rendered).unwrap();
    }
    let want = std::fs::read_to_string(&golden).unwrap();
    assert_eq!(rendered, want);
    assert_eq!(rendered.matches(": error: ").count(), 6);
}
